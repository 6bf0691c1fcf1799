//go:build unix

package democmd

import (
	"os"
	"os/signal"
	"syscall"
)

// catchSIGPIPE makes a write to a closed stdout fail with EPIPE instead of
// killing the process (Go's default for fds 1 and 2), until the returned
// function restores the default.
func catchSIGPIPE() (restore func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGPIPE)
	return func() { signal.Stop(c) }
}
