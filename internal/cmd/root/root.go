// Package rootcmd is healthctl's command tree: which commands exist, the
// global flags, the -o formats (the one place a format is chosen), and the
// configuration applied before a command runs. cmd/healthctl runs it and
// maps its error to an exit code.
package rootcmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/cli"
	democmd "github.com/healthctl/healthctl/internal/cmd/demo"
	draincmd "github.com/healthctl/healthctl/internal/cmd/drain"
	policycmd "github.com/healthctl/healthctl/internal/cmd/policy"
	probecmd "github.com/healthctl/healthctl/internal/cmd/probe"
	versioncmd "github.com/healthctl/healthctl/internal/cmd/version"
	waitcmd "github.com/healthctl/healthctl/internal/cmd/wait"
	watchcmd "github.com/healthctl/healthctl/internal/cmd/watch"
	"github.com/healthctl/healthctl/internal/config"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/version"
)

// commands are every command by name, so a run builds only the one it
// names (building every command's flag set is start-up every run pays).
var commands = []struct {
	name string
	new  func(*cli.Factory) *cobra.Command
}{
	{"probe", func(f *cli.Factory) *cobra.Command { return probecmd.NewCmd(f, nil) }},
	{"wait-healthy", func(f *cli.Factory) *cobra.Command { return waitcmd.NewCmd(f, nil) }},
	{"watch", func(f *cli.Factory) *cobra.Command { return watchcmd.NewCmd(f, nil) }},
	{"drain-test", func(f *cli.Factory) *cobra.Command { return draincmd.NewCmd(f, nil) }},
	{"policy", func(f *cli.Factory) *cobra.Command { return policycmd.NewCmd(f, nil) }},
	{"demo", func(f *cli.Factory) *cobra.Command { return democmd.NewCmd(f, nil) }},
	{"version", func(f *cli.Factory) *cobra.Command { return versioncmd.NewCmd(f, nil) }},
}

// formats are the -o values: the one place a format is chosen. A new
// format is a file in internal/render and a row here.
var formats = []struct {
	name   string
	format render.Format
	// only are the commands that take it (nil: every command but not's).
	only []string
	not  []string
	// why says why the commands in not do not take it.
	why string
}{
	{name: "text", format: render.Text},
	{name: "json", format: render.JSON, not: []string{"demo"},
		why: "the demo shows text output; run the printed commands with -o json"},
	{name: "nagios", format: render.Nagios, only: []string{"probe"}},
}

// FormatFor is the format -o name selects for the command, or the error
// that names what the command takes.
func FormatFor(name string, cmd *cobra.Command) (render.Format, error) {
	var takes []string
	for _, x := range formats {
		if (x.only == nil || slices.Contains(x.only, cmd.Name())) && !slices.Contains(x.not, cmd.Name()) {
			if x.name == name {
				return x.format, nil
			}
			takes = append(takes, x.name)
		}
	}
	src := cli.FlagSource(cmd.Flags(), "output")
	if src == "--output" {
		src = "--output " + name
	}
	for _, x := range formats {
		switch {
		case x.name != name:
		case x.only != nil:
			return nil, cli.UsageErrorf("%s: %s output is for %s only (%s: want %s)", src, name, strings.Join(x.only, ", "), cmd.Name(), strings.Join(takes, " or "))
		default:
			return nil, cli.UsageErrorf("%s: %s: -o %s is not supported (%s)", src, cmd.Name(), name, x.why)
		}
	}
	want, extra := []string{}, ""
	for _, x := range formats {
		if x.only == nil {
			want = append(want, x.name)
		} else {
			extra += fmt.Sprintf(" (or %s, for %s)", x.name, strings.Join(x.only, ", "))
		}
	}
	return nil, cli.UsageErrorf("--output %q: want %s%s", name, strings.Join(want, " or "), extra)
}

// New builds the tree a command line needs: when its first word names a
// command, the root holds only that command; otherwise (help, completion, a
// flag first, a typo to suggest for) every command.
func New(f *cli.Factory, args []string) *cobra.Command {
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
			return prepare(f, cmd)
		},
	}
	root.SetOut(f.Streams.Out)
	root.SetErr(f.Streams.Err)
	// A mistyped flag gets a "did you mean" (cobra gives one for
	// commands only).
	root.SetFlagErrorFunc(cli.SuggestFlag)
	pf := root.PersistentFlags()
	pf.StringVarP(&f.Global.Output, "output", "o", "text", "output format: text, json (probe also: nagios)")
	pf.BoolVarP(&f.Global.Quiet, "quiet", "q", false, "print only errors")
	pf.BoolVarP(&f.Global.Verbose, "verbose", "v", false, "print details (waterfall, certificates, decision) also when not on a terminal")
	pf.StringVar(&f.Global.Config, "config", "", "config file (also HEALTHCTL_CONFIG; default: the user config dir's healthctl/healthctl.yaml, never ./healthctl.yaml unless named)")
	pf.BoolVar(&f.Global.NoColor, "no-color", false, "never colour the output (so does a non-empty NO_COLOR)")

	for _, c := range commands {
		if len(args) > 0 && args[0] == c.name {
			root.AddCommand(c.new(f))
			// Cobra would still build its completion command.
			root.CompletionOptions.DisableDefaultCmd = true
			return root
		}
	}
	// Only the full tree has --version; reading the build info is for it.
	// It is handled here, not through cobra's Version: a version template
	// of our own would link text/template's execution, whose reflection
	// keeps every exported method of the binary (a larger binary, a slower
	// start: .ci/run's start-up guard holds it).
	root.Flags().Bool("version", false, "version for healthctl")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if v, _ := cmd.Flags().GetBool("version"); v {
			fmt.Fprint(f.Streams.Out, versioncmd.Text(version.Get()))
			return nil
		}
		return cmd.Help()
	}
	for _, c := range commands {
		root.AddCommand(c.new(f))
	}
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		cli.RegisterCompletions(root) // internal/cli/complete.go
	}
	return root
}

// StrictCompletion makes `completion SHELL` with a shell Cobra cannot write
// for a usage error (Cobra's own command prints its help and exits 0).
func StrictCompletion(root *cobra.Command) {
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
			return cli.UsageErrorf("completion %q: unsupported shell (want bash, zsh, fish or powershell)", args[0])
		}
	}
}

// prepare applies configuration (env, file) to the flags the user did not
// set, then checks the global flags.
func prepare(f *cli.Factory, cmd *cobra.Command) error {
	if !noConfig(cmd) {
		src := config.Sources{Explicit: f.Global.Config, Getenv: f.Getenv, Environ: f.Environ, UserConfigDir: f.UserConfigDir,
			Known: func() config.Known { return knownFlags(f) }}
		if err := config.Apply(cmd.Name(), cmd.Flags(), src); err != nil {
			return cli.UsageError(err)
		}
	}
	f.Exit1 = cli.Exit1(cmd)
	format, err := FormatFor(f.Global.Output, cmd)
	if err != nil {
		return err
	}
	f.Format = format
	f.FormatNamed = cmd.Flags().Changed("output")
	if f.Global.NoColor || f.Getenv("NO_COLOR") != "" {
		f.Streams.NoColor()
	}
	f.Streams.Term(f.Getenv("TERM"))
	return nil
}

// knownFlags are every command's flags, which a config file's keys are
// checked against (built on a throwaway tree: a run builds only its own).
func knownFlags(f *cli.Factory) config.Known {
	scratch := &cli.Factory{Streams: &output.Streams{Out: io.Discard, Err: io.Discard}, Getenv: f.Getenv}
	root := New(scratch, nil)
	k := config.Known{Root: root.PersistentFlags(), Commands: map[string]*pflag.FlagSet{}}
	for _, c := range root.Commands() {
		k.Commands[c.Name()] = c.Flags()
	}
	return k
}

// noConfig says a command never reads the config file or environment: a
// broken config must not break `version` or shell completion, and nothing
// of the user's may change what `demo` shows.
func noConfig(cmd *cobra.Command) bool {
	if !cmd.HasParent() {
		return true // the root itself: help and --version
	}
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "version", "completion", "help", "demo", democmd.ServiceCmd, cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return true
		}
	}
	return false
}
