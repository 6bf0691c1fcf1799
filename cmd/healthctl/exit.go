package main

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/cli"
	rootcmd "github.com/healthctl/healthctl/internal/cmd/root"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/render"
)

// exitCode is the one place a run's error becomes its exit code (the codes
// themselves are defined in internal/exitcode): it prints the error as the
// run's one line, keeps a child's status or a plugin code as it is, and
// turns the codes of a run a signal cancelled into 130/143.
//
// An error without a code is mapped by what it is, never to 2 by default:
//   - a write failure of healthctl's own (a *output.WriteError, or an
//     error caused by ENOSPC, EROFS, EPIPE, EIO, EDQUOT) is 74;
//   - an error cobra returned before the command ran (an unknown command,
//     wrong arguments) is 2, the user's input;
//   - any other error a command returned is 70: a command must say what
//     its errors mean, and one that does not is a bug, not the user's.
//
// ran says whether the command's own run (its RunE) started.
func exitCode(f *cli.Factory, cmd *cobra.Command, err error, ran bool) int {
	code, plugin, child := exitcode.Pass, false, false
	usageCode, usageLine := 0, ""
	// Text printed with fmt.Fprint drops its errors: stdout that could not
	// be written still makes the run exit 74 — also over a code the run
	// meant to end with quietly (its results are lost: the caller must not
	// read "refused" or "redeploy" from output it never got).
	if cw, ok := f.Streams.Out.(*output.CheckedWriter); ok && cw.Err() != nil {
		var ee *cli.ExitError
		if errors.Is(cw.Err(), syscall.EPIPE) && !(errors.As(err, &ee) && ee.ChildStatus) {
			// The reader went away (healthctl demo | head -1): exit as a
			// process SIGPIPE killed would, saying nothing — a shell's
			// reader closing early is not healthctl's I/O failure.
			return exitcode.SIGPIPE
		}
		if err == nil || (errors.As(err, &ee) && ee.Err == nil && !ee.ChildStatus && !ee.Plugin) {
			err = cw.Err()
		}
	}
	if err != nil {
		var ee *cli.ExitError
		switch {
		case errors.As(err, &ee):
			code, plugin, child = ee.Code, ee.Plugin, ee.ChildStatus
			err = ee.Err
		case output.IsWriteFailure(err):
			code = exitcode.IOError
		case !ran:
			code = exitcode.Usage
		default:
			code = exitcode.Internal
			err = fmt.Errorf("internal error (an error without an exit code, a bug: please report it): %w", err)
		}
		// A command may speak another convention for usage errors
		// (probe -o nagios: monitoring-plugins' UNKNOWN, its one line on
		// stdout instead of stderr).
		if code == exitcode.Usage && !plugin && cmd != nil {
			usageCode, usageLine = usageIn(f, cmd, err)
		}
		if err != nil && usageLine == "" {
			fmt.Fprintf(f.Streams.Err, "healthctl: %s\n", cli.OneLine(err.Error()))
		}
	}
	if usageLine != "" {
		fmt.Fprint(f.Streams.Out, usageLine)
	}
	if child {
		return code
	}
	// A run whose flags did not parse never reached prepare, which sets
	// f.Exit1: the flag may still have been given.
	f.Exit1 = f.Exit1 || cli.Exit1(cmd)
	// -o nagios speaks the plugins' codes instead (0 OK, 1 WARNING, 2
	// CRITICAL, 3 UNKNOWN): its status line names the state its exit code
	// is, and --exit-1 folding CRITICAL to 1 would make Nagios read a
	// WARNING under a CRITICAL line.
	if code != exitcode.Pass && f.Exit1 && !plugin && usageLine == "" {
		return f.ExitCode(code) // --exit-1: Docker's "unhealthy"
	}
	if usageLine != "" {
		return usageCode
	}
	if s := f.Signal(); s != nil && code != exitcode.Usage {
		return exitcode.ForSignal(s)
	}
	return code
}

// usageIn is a usage error in the format's own convention, when it has one
// (render.UsageLiner): its code and its line on stdout ("": the usual line
// on stderr). The format is the one -o names even when the run stopped
// before prepare chose it (a flag that did not parse).
func usageIn(f *cli.Factory, cmd *cobra.Command, err error) (int, string) {
	format := f.Format
	if format == nil {
		format, _ = rootcmd.FormatFor(f.Global.Output, cmd)
	}
	u, ok := format.(render.UsageLiner)
	if !ok {
		return 0, ""
	}
	msg := "usage error"
	if err != nil {
		msg = cli.OneLine(err.Error())
	}
	return u.UsageLine(msg)
}
