package cli

import (
	"errors"
	"fmt"

	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
)

// ExitError carries an exit code up to main, which prints Err (when there
// is one) as the run's one error line. A nil Err means "exit quietly with
// Code": the command already said what it had to.
type ExitError struct {
	Code int
	Err  error
	// Plugin marks a monitoring-plugins code (-o nagios), which must not be
	// read as one of ours (its 2 is CRITICAL, not a usage error).
	Plugin bool
	// ChildStatus marks the exit status of `-- CMD`, passed through as it
	// is (its 2 is not our usage error, and a signal does not replace it).
	ChildStatus bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageErrorf is a usage or configuration error: one line, exit 2.
func UsageErrorf(format string, args ...any) error {
	return &ExitError{Code: exitcode.Usage, Err: fmt.Errorf(format, args...)}
}

// UsageError wraps err as a usage error (nil stays nil; an error that
// already carries a code keeps it).
func UsageError(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: exitcode.Usage, Err: err}
}

// SilentExit ends the command with code and prints nothing more.
func SilentExit(code int) error {
	if code == 0 {
		return nil
	}
	return &ExitError{Code: code}
}

// SignalExit ends the command with the exit code of the signal that
// cancelled the run (130 when none was recorded).
func (f *Factory) SignalExit() error { return SilentExit(exitcode.ForSignal(f.Signal())) }

// SignalCode is the exit code for the signal that cancelled this run.
func (f *Factory) SignalCode() int { return exitcode.ForSignal(f.Signal()) }

// OneLine keeps an error message on one line (output.OneLine).
func OneLine(s string) string { return output.OneLine(s) }
