// Package democmd is `healthctl demo`: every command, run in-process against
// the loopback services of internal/demo, printed as a user would type it.
package democmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/demo"
	"github.com/healthctl/healthctl/internal/exitcode"
)

// ServiceCmd is the first argument that makes the healthctl binary the
// demo's drain-test subject (demo.DrainSubject): a real process that
// receives a real SIGTERM. It is no command of the tree (help never shows
// it); Main checks for it before it sets up any signal handling, since the
// subject handles SIGTERM itself.
const ServiceCmd = "__demo-service"

// RunService runs the drain-test subject with the arguments after
// ServiceCmd and returns its exit status.
func RunService(args []string) int { return demo.DrainSubject(args, os.Stderr) }

// demoWatch runs three `watch --once` sweeps, as cron would, over two
// targets: checkout fails once (a blip), billing keeps failing (an outage,
// redeployed once its streak reaches the threshold).
func demoWatch(ctx context.Context, f *cli.Factory, lab *demo.Lab) error {
	fleet, err := lab.StartFleet()
	if err != nil {
		return err
	}
	w := f.Streams.Out
	args := []string{"watch", "--once", "-o", "text", "--targets", fleet.TargetsFile, "--state", fleet.StateFile,
		"--failure-threshold", "2", "--on-redeploy", `echo "redeploying $HEALTHCTL_TARGET ($HEALTHCTL_REASON)"`}
	for _, sweep := range []struct {
		say               string
		checkout, billing bool // up
	}{
		{"Sweep 1: both serve.", true, true},
		{"Sweep 2: both stop listening. One failure is not an outage (--failure-threshold 2).", false, false},
		{"Sweep 3: checkout is back (it was a blip); billing is still down: an outage, redeployed once.", true, false},
	} {
		if err := fleet.Blip.Set(sweep.checkout); err != nil {
			return err
		}
		if err := fleet.Outage.Set(sweep.billing); err != nil {
			return err
		}
		fmt.Fprintln(w, sweep.say)
		demoCommand(ctx, f, args...)
		if ctx.Err() != nil {
			return nil
		}
	}
	fmt.Fprintln(w, "Exit 8 says a sweep decided a redeploy; the state file carries the streaks between runs.")
	return nil
}

// demoDrain runs drain-test against a service that drains as it should,
// then against one that closes its listener at once.
func demoDrain(ctx context.Context, f *cli.Factory, lab *demo.Lab) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	w := f.Streams.Out
	for _, c := range []struct{ mode, say string }{
		{"good", "A service that flips readiness to 503 on SIGTERM, keeps serving for the pre-drain, then exits 0:"},
		{"closeearly", "One that closes its listener at once on SIGTERM (the resets a rolling deploy sees):"},
	} {
		addr, err := lab.FreePort()
		if err != nil {
			return err
		}
		u := "http://" + addr
		fmt.Fprintf(w, "%s\n", c.say)
		demoCommand(ctx, f, "drain-test", "--pre-drain", "500ms", "--shutdown-timeout", "2s",
			"--ready", u+"/ready", "--live", u+"/live", "--inflight", u+"/slow",
			"--", self, ServiceCmd, "-addr", addr, "-mode", c.mode, "-slow", "100ms")
		if ctx.Err() != nil {
			return nil
		}
	}
	return nil
}

// demoStep is one part of the demo after the probe table.
type demoStep struct {
	title string
	run   func(ctx context.Context, f *cli.Factory, lab *demo.Lab) error
}

// demoSteps run in order after the probe table and the wait-healthy example.
var demoSteps = []demoStep{
	{title: "watch: tell a blip from an outage across cron runs (--once, state in a file)", run: demoWatch},
	{title: "drain-test: prove a graceful shutdown from the outside", run: demoDrain},
}

// Options are demo's flags.
type Options struct {
	// PortBase puts the demo's services on 127.0.0.1 ports PortBase to
	// PortBase+demo.Ports-1 (0: ports the system picks).
	PortBase int
	// Keep leaves the services (and the files the printed commands name)
	// up after the demo until Ctrl-C, so those commands can be typed.
	Keep bool

	// source names where a flag's value came from (the flag, a
	// variable, the config file), for errors.
	source func(name string) string
}

// NewCmd builds the command; runF replaces Run in flag-parsing tests (nil:
// the real run).
func NewCmd(f *cli.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show every command against built-in services on loopback (offline, ~5s)",
		Long: `Start built-in services on 127.0.0.1 that each fail in one real way (healthy,
503, a redirect to another site, nothing listening, a hang, a self-signed and an
expired certificate, a name that does not exist — answered by a DNS server on
loopback), probe them all and show outcome, reason, exit code and decision; then
wait-healthy against a service that becomes healthy after two seconds, and the
other commands. Every command is printed as you would type it. Nothing leaves
this machine and nothing is left running; its temporary directory (which holds
no private key) is removed however it ends: done, Ctrl-C, SIGTERM, or its
output closed early (healthctl demo | head). --keep leaves the services up
after the demo, until Ctrl-C, so the commands it printed can be typed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fs := cmd.Flags()
	opts.source = func(name string) string { return cli.FlagSource(fs, name) }
	fs.IntVar(&opts.PortBase, "port-base", 0,
		fmt.Sprintf("put the demo's services on 127.0.0.1 ports `N` to N+%d (0: ports the system picks)", demo.Ports-1))
	fs.BoolVar(&opts.Keep, "keep", false, "keep the services up after the demo, until Ctrl-C, so the printed commands can be typed")
	return cmd
}

// Run runs the demo.
func Run(ctx context.Context, f *cli.Factory, opts *Options) error {
	if err := demo.CheckPortBase(opts.PortBase); err != nil {
		src := "--port-base"
		if opts.source != nil {
			src = opts.source("port-base")
		}
		if strings.HasPrefix(src, "--") {
			src = fmt.Sprintf("%s %d", src, opts.PortBase)
		}
		return cli.UsageErrorf("%s: %v", src, err)
	}
	// The output's reader going away (healthctl demo | head -1) stops the
	// demo like Ctrl-C does, so it cleans up: Go would otherwise kill the
	// process at the next write, on SIGPIPE, with the services' directory
	// left behind.
	defer catchSIGPIPE()()
	// Its services are started (and a temporary directory made) only
	// once a signal would stop it cleanly.
	f.SignalsCaught()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := &stopWriter{w: f.Streams.Out, stop: cancel}
	s, orig := *f.Streams, f.Streams
	s.Out = out
	f.Streams = &s
	defer func() { f.Streams = orig }()

	err := run(ctx, f, opts)
	if out.failed.Load() {
		return cli.SilentExit(exitcode.SIGPIPE)
	}
	return err
}

// stopWriter is the demo's stdout: its first failed write (EPIPE: nobody
// reads any more) cancels the run.
type stopWriter struct {
	w      io.Writer
	stop   func()
	failed atomic.Bool
}

func (s *stopWriter) Write(p []byte) (int, error) {
	if s.failed.Load() {
		return 0, errStopped
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.failed.Store(true)
		s.stop()
	}
	return n, err
}

var errStopped = errors.New("demo: the output was closed")

func run(ctx context.Context, f *cli.Factory, opts *Options) error {
	start := time.Now()
	lab, err := demo.Start(demo.Options{PortBase: opts.PortBase})
	if err != nil {
		// A port of --port-base already taken, or no port at all: the
		// user's setting or this machine, never a bug (exit 2, one line).
		return cli.UsageErrorf("demo: starting the services: %v", err)
	}
	defer lab.Close()
	w := f.Streams.Out
	heading := heading(f.Streams.OutColor)
	stopped := func() error {
		if ctx.Err() != nil {
			return f.SignalExit()
		}
		return nil
	}

	fmt.Fprintf(w, "%s\n", heading("healthctl demo: %d services on 127.0.0.1, each failing in one real way; nothing leaves this machine", len(lab.Services)))
	fmt.Fprintf(w, "\n%s\n", heading("1. probe: one look says why"))
	if err := demoProbeTable(ctx, f, lab); err != nil {
		if ctx.Err() != nil {
			return stopped()
		}
		return err
	}
	if err := stopped(); err != nil {
		return err
	}

	// One failure in full: the waterfall, the chain and the decision.
	var expired demo.Service
	for _, s := range lab.Services {
		if strings.Contains(s.Name, "expired") {
			expired = s
		}
	}
	fmt.Fprintf(w, "\n%s\n", heading("Details of one (-v; on a terminal they are shown by default):"))
	demoCommand(ctx, f, append(append([]string{"probe", "-v"}, expired.Args...), expired.URL)...)
	if err := stopped(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n%s\n", heading("2. wait-healthy: gate a pipeline until the service really serves"))
	warming, err := lab.StartWarming(2 * time.Second)
	if err != nil {
		return fmt.Errorf("demo: %v", err)
	}
	fmt.Fprintln(w, "A service that answers 503 (Retry-After: 1) for 2s, then 200:")
	demoCommand(ctx, f, "wait-healthy", "--interval", "250ms", "--timeout", "10s", warming)

	for i, step := range demoSteps {
		if err := stopped(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s\n", heading("%d. %s", i+3, step.title))
		if err := step.run(ctx, f, lab); err != nil {
			if ctx.Err() != nil {
				return stopped()
			}
			return fmt.Errorf("demo: %s: %v", step.title, err)
		}
	}
	if err := stopped(); err != nil {
		return err
	}
	if opts.Keep {
		fmt.Fprintf(w, "\nDemo done in %s. Its services stay up (--keep): type the commands above in another terminal. Ctrl-C stops them and removes their files.\n",
			time.Since(start).Round(100*time.Millisecond))
		// The user ends it; the signal's exit code says so (130).
		<-ctx.Done()
		return stopped()
	}
	fmt.Fprintf(w, "\nDemo done in %s; every service is stopped (healthctl demo --keep keeps them up for the commands above). Next: `healthctl probe --help`, and the README's guides.\n",
		time.Since(start).Round(100*time.Millisecond))
	return nil
}

// demoProbeTable probes every service at once and shows one row each.
func demoProbeTable(ctx context.Context, f *cli.Factory, lab *demo.Lab) error {
	args := []string{"probe", "-o", "json", "--dns-server", lab.DNS, "--cacert", lab.CAFile, "--read-timeout", "1s"}
	for _, s := range lab.Services {
		args = append(args, s.URL)
	}
	out, _, _ := demoCapture(ctx, f, args...)
	byURL := map[string]demoRow{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var r demoRow
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			byURL[r.URL] = r
		}
	}
	rows := make([]demoRow, 0, len(lab.Services))
	for _, s := range lab.Services {
		r, ok := byURL[s.URL]
		if !ok {
			return fmt.Errorf("demo: no result for %s", s.URL)
		}
		r.Service = s.Name
		rows = append(rows, r)
	}
	w := f.Streams.Out
	if err := demoTable(w, f.Streams.OutTable(), rows, f.Streams.OutColor); err != nil {
		return err
	}
	fmt.Fprintln(w, "Exit codes: 0 pass, 1 unreachable, 3 tls, 4 timeout, 5 refused, 6 dns. The decision is what a")
	fmt.Fprintln(w, "reconciler would do with this one result (`healthctl policy` prints the rules). The same, yourself")
	fmt.Fprintln(w, "(the services live as long as the demo: healthctl demo --keep keeps them up until Ctrl-C):")
	fmt.Fprintf(w, "  $ healthctl %s\n", shellJoin(args))
	return nil
}

// demoCommand prints a command line and runs it in-process with the demo's
// isolation: no variables, no config file, no proxies.
func demoCommand(ctx context.Context, f *cli.Factory, args ...string) int {
	fmt.Fprintf(f.Streams.Out, "$ healthctl %s\n", shellJoin(args))
	code := f.Exec(ctx, &cli.Factory{Streams: f.Streams, Getenv: demoEnv(f.Getenv), Exec: f.Exec}, args)
	fmt.Fprintf(f.Streams.Out, "(exit %d)\n", code)
	return code
}

// demoCapture runs a command in-process with its output captured.
func demoCapture(ctx context.Context, f *cli.Factory, args ...string) (stdout, stderr []byte, code int) {
	var out, errb bytes.Buffer
	s := *f.Streams
	s.Out, s.Err, s.OutTTY, s.ErrTTY, s.OutColor, s.ErrColor, s.ErrCursor, s.OutWidth, s.ErrWidth = &out, &errb, false, false, false, false, false, 0, 0
	code = f.Exec(ctx, &cli.Factory{Streams: &s, Getenv: demoEnv(f.Getenv), Exec: f.Exec}, args)
	return out.Bytes(), errb.Bytes(), code
}

// demoEnv keeps only NO_COLOR and TERM from the user's environment, and points the
// config file at nothing, so HEALTHCTL_* variables, a ./healthctl.yaml or a
// proxy cannot change what the demo shows.
func demoEnv(getenv func(string) string) func(string) string {
	return func(k string) string {
		switch k {
		case "NO_COLOR", "TERM":
			return getenv(k)
		case "HEALTHCTL_CONFIG":
			return os.DevNull
		}
		return ""
	}
}

// shellJoin prints arguments the way a POSIX shell reads them back: words
// with anything but safe characters in single quotes.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		safe := a != ""
		for _, r := range a {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)) {
				safe = false
				break
			}
		}
		if safe {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
