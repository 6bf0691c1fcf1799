package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/wait"
)

// version is set by the release build (-ldflags "-X main.version=...").
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return "dev"
}

// env is how commands read the environment (tests pass a map).
type env func(string) string

// app is what every command shares for one invocation.
type app struct {
	streams *output.Streams
	getenv  env
	// signal is the signal that cancelled the run, if any.
	signal atomic.Value // os.Signal
	global globalFlags
	// prober runs every probe (nil: probe.Run); tests inject faults here.
	prober wait.Prober
	// signalsReady is closed once SIGINT/SIGTERM are being caught (nil
	// in-process, where nothing is caught).
	signalsReady chan struct{}
}

// probe runs one probe with the app's prober.
func (a *app) probe(ctx context.Context, o *probe.Options) probe.Result {
	if a.prober != nil {
		return a.prober(ctx, o)
	}
	return probe.Run(ctx, o)
}

// globalFlags are the persistent flags of every command.
type globalFlags struct {
	output  string
	quiet   bool
	verbose bool
	config  string
	noColor bool
}

// Main runs healthctl with the process's arguments and streams and returns
// its exit code. A panic is a bug: it is reported and exits 70.
func Main() int { return mainWith(nil) }

// mainWith is Main with a hook that adjusts the app before it runs (tests
// inject a failing prober through it).
func mainWith(configure func(*app)) int {
	if len(os.Args) > 1 && os.Args[1] == demoServiceCmd {
		// The demo's drain-test subject handles its own signals.
		return fixture.DrainService(os.Args[2:])
	}
	// net/http logs oddities ("Unsolicited response ...") through the
	// standard logger; a probe reports what matters in its result instead.
	log.SetOutput(io.Discard)
	streams := output.System()
	return guard(streams.Err, func() int {
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		a := &app{streams: streams, getenv: os.Getenv, signalsReady: make(chan struct{})}
		if configure != nil {
			configure(a)
		}
		// signal.Notify waits for the runtime to start a signal thread
		// (0.1-3 ms at start-up on a loaded machine): it runs alongside the
		// command. wait-healthy waits for it (signalsCaught) before it
		// probes or starts CMD; probe does not wait (see probeRun).
		sigs := make(chan os.Signal, 1)
		go func() {
			defer crash.Recover()
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
			close(a.signalsReady)
			for s := range sigs {
				a.signal.CompareAndSwap(nil, s)
				stop()
			}
		}()
		// No signal.Stop: the process exits when run returns, and waiting
		// for a Notify still in progress would only delay that.
		return a.run(ctx, os.Args[1:])
	})
}

// guard runs f and turns a panic into one line on w and ExitInternal: a Go
// panic would otherwise exit 2, the usage-error code.
func guard(w io.Writer, f func() int) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(w, "healthctl: internal error (a bug, please report it): %v\n", r)
			code = ExitInternal
		}
	}()
	return f()
}

// run executes one command line on a fresh command tree, so tests can call
// it in-process, and maps its error to an exit code, printing it once.
func (a *app) run(ctx context.Context, args []string) int {
	root := a.newRootCmdFor(args)
	root.SetArgs(args)
	if len(args) > 0 && args[0] == "completion" {
		strictCompletion(root)
	}
	cmd, err := root.ExecuteContextC(ctx)
	code, plugin, child := ExitPass, false, false
	if err != nil {
		code = ExitUsage // cobra's own errors: unknown command, bad args
		var ee *exitError
		if errors.As(err, &ee) {
			code, plugin, child = ee.code, ee.plugin, ee.childStatus
			err = ee.err
		}
		if err != nil {
			fmt.Fprintf(a.streams.Err, "healthctl: %s\n", oneLine(err.Error()))
		}
	}
	if child {
		return code
	}
	// Only probe speaks monitoring-plugins' codes: for the others 3 is tls.
	if a.global.output == "nagios" && !plugin && code == ExitUsage && cmd != nil && cmd.Name() == "probe" {
		return NagiosUnknown
	}
	if s, ok := a.signal.Load().(os.Signal); ok && code != ExitUsage {
		return signalExit(s)
	}
	return code
}

// signalCode is the exit code for the signal that cancelled this run
// (130 when none was recorded: the context ended some other way).
func (a *app) signalCode() int {
	s, _ := a.signal.Load().(os.Signal)
	return signalExit(s)
}

// oneLine keeps an error message on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// newRootCmd builds the whole command tree.
func (a *app) newRootCmd() *cobra.Command { return a.newRootCmdFor(nil) }

// newRootCmdFor builds the tree a command line needs: when its first word
// names a command registered with a name, the root holds only that command
// (building every command's flag set costs each run ~0.5 ms of start-up);
// otherwise (help, completion, a flag first, a typo to suggest for, a
// command registered without a name) the whole tree.
func (a *app) newRootCmdFor(args []string) *cobra.Command {
	var only func(*app) *cobra.Command
	if len(args) > 0 {
		only = namedCommands[args[0]]
	}
	root := &cobra.Command{
		Use:   "healthctl",
		Short: "Probe HTTP health endpoints and say why they are not healthy",
		Long: `healthctl probes HTTP health endpoints and tells why a service is not healthy:
DNS, refused, TLS (which certificate problem), timeout (which phase), or an
unexpected answer — with a timing waterfall, the certificate chain and the
decision a reconciler would take. Exit codes are stable per outcome.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.prepare(cmd)
		},
	}
	root.SetOut(a.streams.Out)
	root.SetErr(a.streams.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	pf := root.PersistentFlags()
	pf.StringVarP(&a.global.output, "output", "o", "text", "output format: text, json (probe also: nagios)")
	pf.BoolVarP(&a.global.quiet, "quiet", "q", false, "print only errors")
	pf.BoolVarP(&a.global.verbose, "verbose", "v", false, "print details (waterfall, certificates, decision) also when not on a terminal")
	pf.StringVar(&a.global.config, "config", "", "config file (default: ./healthctl.yaml, then the user config dir's healthctl/healthctl.yaml)")
	pf.BoolVar(&a.global.noColor, "no-color", false, "never colour the output (so does a non-empty NO_COLOR)")

	if only != nil {
		root.AddCommand(only(a))
		root.Annotations = map[string]string{partialTree: "true"}
		// The run's command is known, and it is not `completion`: Cobra
		// would still build its completion command (four shells' help
		// texts through fmt.Sprintf, ~0.2 ms of a probe's start-up).
		root.CompletionOptions.DisableDefaultCmd = true
		return root
	}
	// Only the root has --version; reading the build info is for it alone.
	root.Version = versionString()
	for _, name := range slices.Sorted(maps.Keys(namedCommands)) {
		root.AddCommand(namedCommands[name](a))
	}
	for _, add := range extraCommands {
		root.AddCommand(add(a))
	}
	return root
}

// partialTree marks a root built with only the command a run needs.
const partialTree = "healthctl-partial-tree"

// everyCommand returns cmd's root with every command in it, building a
// throwaway full tree when this run's root holds only its own command: the
// config file's keys are checked against every command's flags.
func everyCommand(cmd *cobra.Command) *cobra.Command {
	root := cmd.Root()
	if root.Annotations[partialTree] == "" {
		return root
	}
	streams := &output.Streams{Out: io.Discard, Err: io.Discard}
	return (&app{streams: streams, getenv: func(string) string { return "" }}).newRootCmd()
}

// namedCommands are the commands by name, so a run builds only the one it
// needs (see newRootCmdFor). A command file registers itself with
// registerCommand in an init function.
var namedCommands = map[string]func(*app) *cobra.Command{
	"probe":   (*app).newProbeCmd,
	"version": (*app).newVersionCmd,
}

// registerCommand adds a command by the name its Use line starts with.
func registerCommand(name string, build func(*app) *cobra.Command) {
	if _, dup := namedCommands[name]; dup {
		panic("healthctl: command " + name + " registered twice")
	}
	namedCommands[name] = build
}

// strictCompletion makes `completion SHELL` with a shell Cobra cannot write
// for a usage error (Cobra's own command prints its help and exits 0).
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usageErrorf("completion %q: unsupported shell (want bash, zsh, fish or powershell)", args[0])
		}
	}
}

// extraCommands lets a command file register itself without a name; such
// commands are in the whole tree only, which a run builds when its first
// word names no command registered with registerCommand.
var extraCommands []func(*app) *cobra.Command

// prepare applies configuration (env, file) to the flags the user did not
// set, then checks the global flags.
func (a *app) prepare(cmd *cobra.Command) error {
	if !noConfig(cmd) {
		if err := applyConfig(cmd, a.global.config, a.getenv); err != nil {
			return usageError(err)
		}
	}

	switch a.global.output {
	case "text", "json":
	case "nagios":
		if cmd.Name() != "probe" {
			return usageErrorf("%s: nagios output is for probe only (%s: want text or json)",
				outputSource(cmd), cmd.Name())
		}
	default:
		return usageErrorf("--output %q: want text or json (or nagios, for probe)", a.global.output)
	}
	if a.global.noColor || a.getenv("NO_COLOR") != "" {
		a.streams.NoColor()
	}
	return nil
}

// noConfig says a command never reads the config file or environment: a
// broken ./healthctl.yaml must not break `version` or shell completion,
// and nothing of the user's may change what `demo` shows.
func noConfig(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "version", "completion", "help", "demo", demoServiceCmd, cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return true
		}
	}
	return false
}

// outputSource names where -o's value came from: "--output nagios", the
// variable, or the config file and key.
func outputSource(cmd *cobra.Command) string {
	if s := flagSource(cmd.Flags(), "output"); s != "--output" {
		return s
	}
	return "--output nagios"
}

// signalsCaught returns once SIGINT/SIGTERM are caught (Main starts that
// alongside building the command): a command calls it before it probes or
// starts anything a signal must interrupt gracefully.
func (a *app) signalsCaught() {
	if a.signalsReady != nil {
		<-a.signalsReady
	}
}

func (a *app) json() bool { return a.global.output == "json" }

// details says whether text output shows more than the first line.
func (a *app) details() bool { return a.global.verbose || a.streams.OutTTY }

func (a *app) newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.json() {
				return output.JSONLine(a.streams.Out, map[string]any{"schema_version": output.SchemaVersion, "version": versionString()})
			}
			fmt.Fprintf(a.streams.Out, "healthctl %s\n", versionString())
			return nil
		},
	}
}
