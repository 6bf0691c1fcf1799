package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/cli"
	democmd "github.com/healthctl/healthctl/internal/cmd/demo"
	rootcmd "github.com/healthctl/healthctl/internal/cmd/root"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
)

// Main runs healthctl with the process's arguments and streams and returns
// its exit code. A panic is a bug: it is reported and exits 70.
func Main() int { return mainWith(nil) }

// mainWith is Main with a hook that adjusts the factory before it runs
// (tests inject a failing prober through it).
func mainWith(configure func(*cli.Factory)) int {
	if len(os.Args) > 1 && os.Args[1] == democmd.ServiceCmd {
		// The demo's drain-test subject handles its own signals. It is no
		// command of the tree: this is its one entry point.
		return democmd.RunService(os.Args[2:])
	}
	// net/http logs oddities ("Unsolicited response ...") through the
	// standard logger; a probe reports what matters in its result instead.
	log.SetOutput(io.Discard)
	streams := output.System()
	return guard(streams.Err, func() int {
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		f := &cli.Factory{Streams: streams, Getenv: os.Getenv, Environ: os.Environ, UserConfigDir: os.UserConfigDir,
			SetMemoryLimit: debug.SetMemoryLimit, SetGCPercent: debug.SetGCPercent, ReplaceProcess: true}
		if configure != nil {
			configure(f)
		}
		// SIGINT, SIGTERM and SIGQUIT (which Go would turn into a stack
		// dump and exit 2, the usage-error code) are caught once a command
		// asks (f.SignalsCaught), before it probes, locks or starts
		// anything; probe of one URL asks 10 ms into its probe. Catching
		// a signal makes the runtime start two threads and hand over to
		// one of them three times: ~0.35 ms, a third of a loopback probe
		// above the design floor (docs/benchmarks.md). Until then SIGINT
		// and SIGTERM end the process as their default actions do (a
		// shell sees 130/143) and SIGQUIT is ignored (an rt_sigaction,
		// not a thread): nothing has started that needs cleaning up.
		// SIGPIPE is ignored the same way, so a write to a stdout whose
		// reader went away fails with EPIPE instead of killing the
		// process mid-run (a state file unsaved, a child left): the run
		// finishes its work and exit.go ends it with 141, the code a
		// shell reports for SIGPIPE, whichever command it is.
		signal.Ignore(syscall.SIGQUIT, syscall.SIGPIPE)
		f.CatchSignals = func() {
			// An ignored signal stays ignored in a child (and across
			// exec), a caught one gets its default back: SIGPIPE is
			// caught here, before any command starts a child (-- CMD,
			// hooks, drain-test's subject), so theirs is the default.
			// The channel is never read.
			signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
			crash.Go(func() {
				for s := range sigs {
					f.SetSignal(s)
					stop()
				}
			})
		}
		return run(ctx, f, os.Args[1:])
	})
}

// guard runs fn and turns a panic into one line on w and exit 70: a Go
// panic would otherwise exit 2, the usage-error code.
func guard(w io.Writer, fn func() int) (code int) {
	defer func() {
		if r := recover(); r != nil {
			// The same cleanups as a panic on any other goroutine (a
			// child of -- CMD is killed, not left running).
			crash.RunCleanups()
			fmt.Fprintf(w, "healthctl: internal error (a bug, please report it): %v\n", r)
			code = exitcode.Internal
		}
	}()
	return fn()
}

// run executes one command line on a fresh command tree, so tests (and the
// demo) can call it in-process, and maps its error to an exit code.
func run(ctx context.Context, f *cli.Factory, args []string) int {
	if f.Exec == nil {
		f.Exec = run
	}
	root := rootcmd.New(f, args)
	cli.BareSecondsDurations(root)
	root.SetArgs(args)
	if len(args) > 0 && args[0] == "completion" {
		rootcmd.StrictCompletion(root)
	}
	ran := false
	markRun(root, &ran)
	if _, ok := f.Streams.Out.(*output.CheckedWriter); !ok {
		// Every write to stdout is checked: one that fails is exit 74.
		s := *f.Streams
		s.Out = &output.CheckedWriter{W: s.Out, What: "stdout"}
		f.Streams = &s
		root.SetOut(s.Out)
	}
	cmd, err := root.ExecuteContextC(ctx)
	return exitCode(f, cmd, err, ran)
}

// markRun sets *ran when a command's own run starts: an error without an
// exit code from before (cobra's: unknown command, wrong arguments) is the
// user's, one from after is a bug (see exitCode).
func markRun(c *cobra.Command, ran *bool) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			*ran = true
			return run(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		markRun(sub, ran)
	}
}
