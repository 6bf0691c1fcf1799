//go:build heapprofile

package listen

import (
	"os"
	"runtime/pprof"
	"time"
)

// A build for measurement only (go build -tags heapprofile; never
// released): with HCTL_HEAPPROFILE=FILE set, the process writes its heap
// profile to FILE every 5 s (atomically), for `go tool pprof` on a
// long-running watch (scripts/bench-watch-listen.sh PROFILE=1).
func init() {
	file := os.Getenv("HCTL_HEAPPROFILE")
	if file == "" {
		return
	}
	go func() {
		for {
			time.Sleep(5 * time.Second)
			f, err := os.Create(file + ".new")
			if err != nil {
				continue
			}
			err = pprof.WriteHeapProfile(f)
			if cerr := f.Close(); err == nil && cerr == nil {
				os.Rename(file+".new", file)
			}
		}
	}()
}
