// Package crash turns a panic in any goroutine healthctl starts into the
// documented internal-error exit (70) with one line on stderr. A panic that
// escapes a goroutine would otherwise kill the process with Go's exit code 2,
// which healthctl uses for usage errors.
//
// Every goroutine starts with `defer crash.Recover()`, or is started with
// crash.Go.
package crash

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
)

// ExitInternal mirrors cmd/healthctl's ExitInternal (exit.go is the place
// exit codes are defined; exit_test.go checks this copy).
const ExitInternal = 70

var (
	mu sync.Mutex
	// Out is where the line goes; Exit ends the process. Tests replace both.
	Out  io.Writer = os.Stderr
	Exit           = os.Exit
	// cleanups run before the exit (kill children, release locks).
	cleanups []func()
)

// OnCrash registers f to run before the process exits on a panic; it
// returns a function that unregisters it.
func OnCrash(f func()) (remove func()) {
	mu.Lock()
	defer mu.Unlock()
	cleanups = append(cleanups, f)
	i := len(cleanups) - 1
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if i < len(cleanups) {
			cleanups[i] = nil
		}
	}
}

// Recover must be deferred directly by a goroutine: a panic is reported as
// an internal error and the process exits 70.
func Recover() {
	if r := recover(); r != nil {
		Report(r)
	}
}

// reporting is held by the goroutine that reports a panic: when two
// goroutines panic at once, the second waits here while the first prints
// its one line and exits.
var reporting sync.Mutex

// Report prints the panic value as one line (the stack only with
// HEALTHCTL_DEBUG set), runs the cleanups and exits 70.
func Report(r any) {
	reporting.Lock()
	defer reporting.Unlock() // reached only when Exit returns (tests)
	RunCleanups()
	fmt.Fprintf(Out, "healthctl: internal error (a bug, please report it): %v\n", r)
	if os.Getenv("HEALTHCTL_DEBUG") != "" {
		Out.Write(debug.Stack())
	}
	Exit(ExitInternal)
}

// RunCleanups runs the registered cleanups, last registered first, once:
// Report calls it, and so does main's own recover for a panic on the main
// goroutine.
func RunCleanups() {
	mu.Lock()
	fs := cleanups
	cleanups = nil
	mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		if fs[i] != nil {
			func() {
				defer func() { _ = recover() }()
				fs[i]()
			}()
		}
	}
}

// Go runs f in a goroutine that recovers its panics.
func Go(f func()) {
	go func() {
		defer Recover()
		f()
	}()
}
