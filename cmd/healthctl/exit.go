package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/report"
)

// exitCode is the one place a run's error becomes its exit code (the codes
// themselves are defined in internal/exitcode): it prints the error as the
// run's one line, keeps a child's status or a Nagios code as it is, and
// turns the codes of a run a signal cancelled into 130/143.
func exitCode(f *cli.Factory, cmd *cobra.Command, err error) int {
	code, plugin, child := exitcode.Pass, false, false
	if err != nil {
		code = exitcode.Usage // cobra's own errors: unknown command, bad args
		var ee *cli.ExitError
		if errors.As(err, &ee) {
			code, plugin, child = ee.Code, ee.Plugin, ee.ChildStatus
			err = ee.Err
		}
		// A probe -o nagios usage error has its one line on stdout
		// (below), not twice.
		if err != nil && !nagiosUsage(f, cmd, plugin, code) {
			fmt.Fprintf(f.Streams.Err, "healthctl: %s\n", cli.OneLine(err.Error()))
		}
	}
	if child {
		return code
	}
	if code != exitcode.Pass && cli.Exit1(cmd) {
		return exitcode.Unreachable // --exit-1: Docker's "unhealthy"
	}
	// Only probe speaks monitoring-plugins' codes: for the others 3 is tls.
	if nagiosUsage(f, cmd, plugin, code) {
		// Nagios shows stdout only: without this line it says "(No output on stdout)".
		msg := "usage error"
		if err != nil {
			msg = cli.OneLine(err.Error())
		}
		fmt.Fprint(f.Streams.Out, report.NagiosUnknownLine(msg))
		return exitcode.NagiosUnknown
	}
	if s := f.Signal(); s != nil && code != exitcode.Usage {
		return exitcode.ForSignal(s)
	}
	return code
}

// nagiosUsage reports a usage error of probe -o nagios, which Nagios must
// see as UNKNOWN with its line on stdout.
func nagiosUsage(f *cli.Factory, cmd *cobra.Command, plugin bool, code int) bool {
	return f.Global.Output == "nagios" && !plugin && code == exitcode.Usage && cmd != nil && cmd.Name() == "probe"
}
