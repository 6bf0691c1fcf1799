// Package cli is what every command package shares: the factory that hands
// a command its streams, environment, clock and prober; the typed errors
// that carry an exit code up to main; and the flag groups several commands
// register (the probe options, the policy settings).
package cli

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/proc"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/scheme"
)

// Global are the persistent flags of every command.
type Global struct {
	Output  string
	Quiet   bool
	Verbose bool
	Config  string
	NoColor bool
}

// Factory is what one invocation hands every command: where to write, how
// to read the environment, the clock and the prober. Tests build one with
// buffers, a map for the environment and a fake prober.
type Factory struct {
	Streams *output.Streams
	// Getenv reads the environment (tests pass a map's lookup).
	Getenv func(string) string
	// Environ lists the environment (nil: only Getenv is used); it must
	// agree with Getenv.
	Environ func() []string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Prober runs every probe (nil: probe.Run); tests inject faults here.
	Prober probe.Prober
	// UserConfigDir is where the user's healthctl/healthctl.yaml lives (nil:
	// os.UserConfigDir). Tests point it at an empty directory, so a user's
	// own config never changes what a test sees.
	UserConfigDir func() (string, error)
	// Version is healthctl's version string.
	Version string
	// Exec runs a command line in-process with the factory sub and returns
	// its exit code (the demo runs the other commands this way); set by the
	// root.
	Exec func(ctx context.Context, sub *Factory, args []string) int
	// SetMemoryLimit sets the process's soft memory limit (main passes
	// debug.SetMemoryLimit; nil in-process, where the limit would hold for
	// the whole test binary).
	SetMemoryLimit func(int64) int64
	// SetGCPercent sets GOGC (main passes debug.SetGCPercent; nil
	// in-process).
	SetGCPercent func(int) int
	// ReplaceProcess lets `wait-healthy -- CMD` exec CMD in healthctl's
	// place where the platform can (main sets it; in-process runs, such as
	// tests and the demo, keep CMD as a supervised child).
	ReplaceProcess bool
	// Global holds the persistent flags' values once parsed.
	Global Global
	// Format is the -o format, chosen once by the root (nil: text).
	Format render.Format
	// FormatNamed says the user named the format rather than taking the
	// default (see render.Writer.Named).
	FormatNamed bool
	// Exit1 is --exit-1 in force for this run (the root sets it once the
	// configuration is applied). It is read only through ExitCode.
	Exit1 bool

	// signal is the signal that cancelled the run, if any.
	signal atomic.Value // os.Signal
	// CatchSignals starts catching SIGINT, SIGTERM and SIGQUIT (main sets
	// it; nil in-process, where nothing is caught). Commands call it
	// through SignalsCaught, once.
	CatchSignals func()
	signalsOnce  sync.Once
}

// Probe runs one probe with the factory's prober.
func (f *Factory) Probe(ctx context.Context, o *scheme.Options) probe.Result {
	if f.Prober != nil {
		return f.Prober(ctx, o)
	}
	return probe.Run(ctx, o)
}

// Clock returns the current time from the factory's clock.
func (f *Factory) Clock() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// SetSignal records the first signal that cancelled the run.
func (f *Factory) SetSignal(s os.Signal) { f.signal.CompareAndSwap(nil, s) }

// Signal is the signal that cancelled the run, or nil.
func (f *Factory) Signal() os.Signal {
	s, _ := f.signal.Load().(os.Signal)
	return s
}

// SignalName names the signal that stopped this run, for messages.
func (f *Factory) SignalName() string {
	if s, ok := f.Signal().(syscall.Signal); ok {
		return proc.SignalName(s)
	}
	return "cancelled"
}

// SignalsCaught returns once SIGINT, SIGTERM and SIGQUIT are caught: a
// command calls it before it probes, locks or starts anything a signal
// must interrupt gracefully. Before it, SIGINT and SIGTERM end the process
// as their default actions do and SIGQUIT is ignored (see main).
func (f *Factory) SignalsCaught() {
	if f.CatchSignals != nil {
		f.signalsOnce.Do(f.CatchSignals)
	}
}

// SignalsCaughtAfter calls SignalsCaught after d, on its own goroutine,
// unless stop is called first: for a run that is usually over sooner
// (probe of one URL), whose cut-short summary only a run that lasts can
// need.
func (f *Factory) SignalsCaughtAfter(d time.Duration) (stop func()) {
	if f.CatchSignals == nil {
		return func() {}
	}
	t := time.AfterFunc(d, f.SignalsCaught)
	return func() { t.Stop() }
}

// Render writes r in the run's format: commands hand their results here
// and never ask which format is on.
func (f *Factory) Render(r render.Result) error {
	format := f.Format
	if format == nil {
		format = render.Text
	}
	return format.Write(f.Writer(), r)
}

// Writer is where results are written, with the global switches.
func (f *Factory) Writer() render.Writer {
	return render.Writer{Streams: f.Streams, Quiet: f.Global.Quiet, Verbose: f.Global.Verbose, Named: f.FormatNamed, Getenv: f.Getenv}
}

// ExitCode is the one --exit-1 decision: with --exit-1 every non-zero
// code becomes 1 (Docker's HEALTHCHECK: 0 healthy, 1 unhealthy). A
// command prints the code ExitCode returns (its JSON exit_code) and the
// root ends the process with it, so the two never disagree.
func (f *Factory) ExitCode(code int) int {
	if code != exitcode.Pass && f.Exit1 {
		return exitcode.Unreachable
	}
	return code
}
