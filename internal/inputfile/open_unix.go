//go:build unix

package inputfile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading with O_NONBLOCK: a FIFO opens at
// once instead of waiting for a writer (its type is then refused by Read);
// on a regular file the flag changes nothing.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
