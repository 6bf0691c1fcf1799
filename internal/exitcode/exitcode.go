// Package exitcode holds every exit code healthctl can end with: the only
// place they are defined (the README's table and SPEC's are checked against
// it by cmd/healthctl's tests).
package exitcode

import (
	"os"
	"syscall"

	"github.com/healthctl/healthctl/internal/classify"
)

// The exit codes.
const (
	Pass        = 0
	Unreachable = 1
	Usage       = 2
	TLS         = 3
	Timeout     = 4
	Refused     = 5
	DNS         = 6
	DrainFailed = 7
	Redeploy    = 8
	// Unknown: the probe could not be made from here, or (watch) the
	// sweep's redeploys were held because the whole fleet failed at once.
	Unknown = 9
	// Degraded: probe's answer passed and said it is degraded (a
	// degraded condition held): not a failure, not a clean pass either.
	Degraded = 10
	Internal = 70
	// IOError: healthctl could not write its own output, state or
	// metrics (disk full, permission, read-only file system, a closed
	// stdout): sysexits' EX_IOERR. Never 2, which says the input was wrong.
	IOError = 74
	// A shell's codes for `-- CMD` that could not be started after the
	// probes ran: found but not executable, and not found.
	CannotExecute = 126
	NotFound      = 127
	SIGINT        = 130
	SIGQUIT       = 131
	SIGTERM       = 143
	// SIGPIPE: the reader of the output went away (healthctl demo | head);
	// the code a shell reports for a process that SIGPIPE killed.
	SIGPIPE = 141
)

// With -o nagios, probe uses monitoring-plugins' own codes instead.
const (
	NagiosOK       = 0
	NagiosWarning  = 1
	NagiosCritical = 2
	NagiosUnknown  = 3
)

// ForOutcome returns the exit code of an outcome.
func ForOutcome(o classify.Outcome) int {
	switch o {
	case classify.Pass:
		return Pass
	case classify.TLS:
		return TLS
	case classify.Timeout:
		return Timeout
	case classify.Refused:
		return Refused
	case classify.DNS:
		return DNS
	case classify.Unknown:
		return Unknown
	}
	return Unreachable
}

// ForResult is probe's exit code of a result: its outcome's, but
// Degraded for a degraded pass.
func ForResult(o classify.Outcome, r classify.Reason) int {
	if o == classify.Pass && r == classify.Degraded {
		return Degraded
	}
	return ForOutcome(o)
}

// ForSignal is the exit code after healthctl was stopped by sig: 143 for
// SIGTERM, 131 for SIGQUIT (128 + N, as a shell says), 130 for SIGINT (and
// anything else that cancels a run).
func ForSignal(sig os.Signal) int {
	switch sig {
	case syscall.SIGTERM:
		return SIGTERM
	case syscall.SIGQUIT:
		return SIGQUIT
	}
	return SIGINT
}
