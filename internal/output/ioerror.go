package output

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
)

// WriteError is healthctl failing to write its own output, state or
// metrics (a full disk, a closed pipe, a permission, a read-only file
// system). It is not the user's input that was wrong, nor the target's
// health: it has an exit code of its own (74, sysexits' EX_IOERR).
type WriteError struct {
	// What names what was being written: "stdout", "--prom-file m.prom"
	// ("": the error names it already).
	What string
	Err  error
}

func (e *WriteError) Error() string {
	if e.What == "" {
		return e.Err.Error() // the error names the file already
	}
	return fmt.Sprintf("cannot write %s: %v", e.What, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// NewWriteError types err as a write failure of what (nil stays nil; an
// error that already is one keeps its name).
func NewWriteError(what string, err error) error {
	if err == nil {
		return nil
	}
	var we *WriteError
	if errors.As(err, &we) {
		return err
	}
	return &WriteError{What: what, Err: err}
}

// IsWriteFailure reports whether err is a write failure: a *WriteError, or
// an untyped error whose cause is one of the errnos only a failing write
// gives (no space, quota, read-only file system, broken pipe, I/O error).
func IsWriteFailure(err error) bool {
	var we *WriteError
	if errors.As(err, &we) {
		return true
	}
	for _, e := range []error{syscall.ENOSPC, syscall.EROFS, syscall.EPIPE, syscall.EIO, errDQUOT} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// CheckedWriter remembers the first error a write to W returned, so a
// command that prints with fmt.Fprint (which drops errors) still ends with
// exit 74 when its stdout was a full disk or a closed pipe.
type CheckedWriter struct {
	W    io.Writer
	What string

	mu  sync.Mutex
	err error
}

func (c *CheckedWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = &WriteError{What: c.What, Err: err}
		}
		c.mu.Unlock()
	}
	return n, err
}

// Err is the first write error, typed as a *WriteError (nil: none).
func (c *CheckedWriter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Underlying is the writer a CheckedWriter wraps (w itself otherwise): a
// child process handed healthctl's stdout gets the file itself, not a pipe
// healthctl would have to copy (and the child's isatty would say no).
func Underlying(w io.Writer) io.Writer {
	if c, ok := w.(*CheckedWriter); ok {
		return c.W
	}
	return w
}
