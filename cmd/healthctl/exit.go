package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/healthctl/healthctl/internal/classify"
)

// The exit codes, the only place they live (README "Exit codes" mirrors this
// table; exit_test.go checks both against SPEC.md §2).
const (
	ExitPass        = 0
	ExitUnreachable = 1
	ExitUsage       = 2
	ExitTLS         = 3
	ExitTimeout     = 4
	ExitRefused     = 5
	ExitDNS         = 6
	ExitDrainFailed = 7
	ExitRedeploy    = 8
	ExitInternal    = 70
	// A shell's codes for `-- CMD` that could not be started after the
	// probes ran: found but not executable, and not found.
	ExitCannotExecute = 126
	ExitNotFound      = 127
	ExitSIGINT        = 130
	ExitSIGTERM       = 143
)

// signalExit is the exit code after healthctl was stopped by sig: 143 for
// SIGTERM, 130 for SIGINT (and anything else that cancels a run).
func signalExit(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return ExitSIGTERM
	}
	return ExitSIGINT
}

// With -o nagios, probe uses monitoring-plugins' own codes instead.
const (
	NagiosOK       = 0
	NagiosWarning  = 1
	NagiosCritical = 2
	NagiosUnknown  = 3
)

// outcomeExit maps a probe outcome to its exit code.
var outcomeExit = map[classify.Outcome]int{
	classify.Pass:        ExitPass,
	classify.Unreachable: ExitUnreachable,
	classify.TLS:         ExitTLS,
	classify.Timeout:     ExitTimeout,
	classify.Refused:     ExitRefused,
	classify.DNS:         ExitDNS,
}

// ExitCode returns the exit code of an outcome.
func ExitCode(o classify.Outcome) int {
	if c, ok := outcomeExit[o]; ok {
		return c
	}
	return ExitUnreachable
}

// exitError carries an exit code up to Main. A nil err means "exit quietly
// with code": the command already said what it had to.
type exitError struct {
	code int
	err  error
	// plugin marks a monitoring-plugins code (-o nagios), which must not be
	// read as one of ours (its 2 is CRITICAL, not a usage error).
	plugin bool
	// childStatus marks the exit status of `-- CMD`, passed through as it
	// is (its 2 is not our usage error, and a signal does not replace it).
	childStatus bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is a usage or configuration error: one line, exit 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// usageError wraps err as a usage error (nil stays nil).
func usageError(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: ExitUsage, err: err}
}

// silentExit ends the command with code and prints nothing more.
func silentExit(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code}
}
