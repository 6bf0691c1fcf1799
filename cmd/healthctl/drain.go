package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/drain"
	"github.com/healthctl/healthctl/internal/manifest"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/proc"
)

func init() {
	extraCommands = append(extraCommands, func(a *app) *cobra.Command { return a.newDrainCmd(nil) })
}

// drainOptions is what `healthctl drain-test` runs with, filled by its RunE.
type drainOptions struct {
	exec                        string
	argv                        []string // --exec split, or the words after --
	pid                         int
	ready, live, inflight       string
	preDrain, shutdown, flipMax time.Duration
	readyTimeout                time.Duration
	signal                      string
	sig                         syscall.Signal
	manifest                    string
	// preDrainSource and shutdownSource say where P and S came from, for
	// the lint's findings.
	preDrainSource, shutdownSource string
}

// newDrainCmd builds drain-test; runF replaces drainRun in flag parsing
// tests (nil: the real run).
func (a *app) newDrainCmd(runF func(*drainOptions) error) *cobra.Command {
	opts := &drainOptions{}
	cmd := &cobra.Command{
		Use:   "drain-test (--exec 'CMD' | --pid N | -- CMD ARGS...) --ready URL --live URL [--inflight URL] | --manifest FILE",
		Short: "Prove a graceful shutdown from the outside, or lint a manifest's shutdown timing",
		Long: `drain-test starts a service (--exec, or a command after --) or attaches to one
(--pid), waits until readiness and liveness answer 200, starts slow requests on
--inflight and keeps a kept-alive connection open, then sends --signal to the
process itself (as an orchestrator signals PID 1) and watches its shutdown:
readiness must answer 503 within --ready-flip-max and stay 503, liveness must
stay 200 and the listener keep serving during --pre-drain, in-flight requests
must finish, and the process must exit 0 within --shutdown-timeout. Each broken
invariant is named (SPEC.md §7). Exit 0 when all hold, 7 when any fails.

--exec is split into words (quotes group, no shell): no shell is put in front
of the service, because a shell that does not pass the signal on is exactly the
failure SIGNAL_NOT_FORWARDED detects. Write sh -c '...' yourself if you want one.
The service gets PRE_DRAIN_MS and SHUTDOWN_TIMEOUT_MS from --pre-drain and
--shutdown-timeout unless they are already in the environment.

--manifest FILE lints a Kubernetes manifest or a Compose file's shutdown timing
without running anything (exit 0 clean, 7 findings, 2 unreadable).`,
		Example: `  healthctl drain-test --pre-drain 5s --shutdown-timeout 20s \
    --ready http://127.0.0.1:8080/readiness --live http://127.0.0.1:8080/healthcheck \
    --inflight http://127.0.0.1:8080/slow -- node server.js
  healthctl drain-test --pid 4242 --ready http://127.0.0.1:8080/ready --live http://127.0.0.1:8080/live
  healthctl drain-test --manifest deploy/kubernetes.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.check(cmd, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.manifest != "" {
				return a.lintRun(opts)
			}
			return a.drainRun(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.exec, "exec", "", "start this command (split into words, no shell) and test its shutdown")
	f.IntVar(&opts.pid, "pid", 0, "attach to this running process instead of starting one")
	f.StringVar(&opts.ready, "ready", "", "readiness URL: 200 before the signal, 503 after")
	f.StringVar(&opts.live, "live", "", "liveness URL: 200 throughout the pre-drain")
	f.StringVar(&opts.inflight, "inflight", "", "a slow URL: requests in flight at the signal must complete")
	f.DurationVar(&opts.preDrain, "pre-drain", 5*time.Second, "P, PRE_DRAIN_MS: how long readiness is 503 while the listener still serves")
	f.DurationVar(&opts.shutdown, "shutdown-timeout", 20*time.Second, "S, SHUTDOWN_TIMEOUT_MS: the process is gone by then")
	f.DurationVar(&opts.flipMax, "ready-flip-max", time.Second, "readiness must answer 503 this soon after the signal")
	f.DurationVar(&opts.readyTimeout, "ready-timeout", 30*time.Second, "how long to wait for readiness and liveness before the signal")
	f.StringVar(&opts.signal, "signal", "TERM", "the signal sent (TERM, INT, QUIT, HUP, USR1, USR2)")
	f.StringVar(&opts.manifest, "manifest", "", "lint this Kubernetes or Compose file's shutdown timing instead of running anything")
	return cmd
}

// check validates the flags: every bad value is a usage error naming it.
func (o *drainOptions) check(cmd *cobra.Command, args []string) error {
	changed := cmd.Flags().Changed
	o.preDrainSource, o.shutdownSource = "default", "default"
	if changed("pre-drain") || o.preDrain != 5*time.Second {
		o.preDrainSource = "--pre-drain"
	}
	if changed("shutdown-timeout") || o.shutdown != 20*time.Second {
		o.shutdownSource = "--shutdown-timeout"
	}
	if o.preDrain < 0 {
		return usageErrorf("--pre-drain %s: want 0 or more", o.preDrain)
	}
	if o.shutdown <= 0 {
		return usageErrorf("--shutdown-timeout %s: want more than 0", o.shutdown)
	}
	if o.manifest != "" {
		if o.exec != "" || o.pid != 0 || len(args) > 0 {
			return usageErrorf("--manifest lints a file and runs nothing: it excludes --exec, --pid and a command")
		}
		return nil
	}
	if o.preDrain >= o.shutdown {
		return usageErrorf("--pre-drain %s must be shorter than --shutdown-timeout %s (seeds/003: PRE_DRAIN_MS < SHUTDOWN_TIMEOUT_MS)", o.preDrain, o.shutdown)
	}
	if o.flipMax <= 0 || o.readyTimeout <= 0 {
		return usageErrorf("--ready-flip-max and --ready-timeout must be more than 0")
	}
	sig, err := proc.ParseSignal(o.signal)
	if err != nil || sig == syscall.SIGKILL {
		return usageErrorf("--signal %q: want one of TERM, INT, QUIT, HUP, USR1, USR2 (KILL cannot be handled, there is nothing to test)", o.signal)
	}
	o.sig = sig
	n := 0
	if o.exec != "" {
		n++
		words, err := manifest.SplitWords(o.exec)
		if err != nil {
			return usageErrorf("--exec: %v", err)
		}
		if len(words) == 0 {
			return usageErrorf("--exec: empty command")
		}
		o.argv = words
	}
	if len(args) > 0 {
		n++
		o.argv = args
	}
	if changed("pid") {
		n++
		if o.pid <= 0 {
			return usageErrorf("--pid %d: want a process ID", o.pid)
		}
		if o.pid == os.Getpid() {
			return usageErrorf("--pid %d is healthctl itself", o.pid)
		}
	}
	switch {
	case n == 0:
		return usageErrorf("drain-test needs a service: --exec 'CMD', a command after --, or --pid N (or --manifest FILE to lint)")
	case n > 1:
		return usageErrorf("--exec, --pid and a command after -- are mutually exclusive")
	}
	for _, u := range []struct{ flag, val string }{{"--ready", o.ready}, {"--live", o.live}, {"--inflight", o.inflight}} {
		if u.val == "" {
			if u.flag == "--inflight" {
				continue
			}
			return usageErrorf("%s URL is required", u.flag)
		}
		pu, err := url.Parse(u.val)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return usageErrorf("%s %q: want an http:// or https:// URL", u.flag, u.val)
		}
	}
	return nil
}

func (a *app) lintRun(o *drainOptions) error {
	data, err := os.ReadFile(o.manifest)
	if err != nil {
		return usageErrorf("--manifest: %v", err)
	}
	res, err := manifest.Lint(o.manifest, data, manifest.Timing{
		PreDrain: o.preDrain, ShutdownTimeout: o.shutdown,
		PreDrainSource: o.preDrainSource, ShutdownTimeoutSource: o.shutdownSource,
	})
	if err != nil {
		var pe *manifest.ParseError
		if errors.As(err, &pe) {
			return usageErrorf("--manifest %s", pe.Error())
		}
		return usageError(err)
	}
	code := ExitPass
	if len(res.Findings) > 0 {
		code = ExitDrainFailed
	}
	if a.json() {
		if res.Findings == nil {
			res.Findings = []manifest.Finding{}
		}
		if err := output.JSONLine(a.streams.Out, output.LintJSON{SchemaVersion: output.SchemaVersion, OK: code == 0, ExitCode: code,
			Manifest: o.manifest, Checked: res.Checked, Findings: res.Findings}); err != nil {
			return err
		}
		return silentExit(code)
	}
	if !a.global.quiet || code != 0 {
		w := a.streams.Out
		if a.global.quiet {
			w = a.streams.Err
		}
		output.LintReport(w, o.manifest, res, a.streams.OutColor)
	}
	return silentExit(code)
}

func (a *app) drainRun(cmd *cobra.Command, o *drainOptions) error {
	s := drain.Settings{PreDrain: o.preDrain, ShutdownTimeout: o.shutdown, ReadyFlipMax: o.flipMax}
	cfg := drain.Config{
		Argv: o.argv, Pid: o.pid,
		ReadyURL: o.ready, LiveURL: o.live, InflightURL: o.inflight,
		Signal: o.sig, Settings: s, ReadyTimeout: o.readyTimeout,
		Stdout: a.streams.Err, Stderr: a.streams.Err,
	}
	if !a.global.quiet {
		cfg.Log = func(format string, args ...any) {
			fmt.Fprintf(a.streams.Err, "drain-test: "+format+"\n", args...)
		}
	}
	if len(o.argv) > 0 {
		for _, kv := range []struct {
			name string
			d    time.Duration
		}{{"PRE_DRAIN_MS", o.preDrain}, {"SHUTDOWN_TIMEOUT_MS", o.shutdown}} {
			want := strconv.FormatInt(kv.d.Milliseconds(), 10)
			if have, ok := os.LookupEnv(kv.name); ok {
				if have != want {
					fmt.Fprintf(a.streams.Err, "drain-test: WARN: %s=%s in the environment: the service runs with it, but is judged against %s ms\n", kv.name, have, want)
				}
				continue
			}
			cfg.Env = append(cfg.Env, kv.name+"="+want)
		}
	}
	obs, interrupted, err := drain.Run(cmd.Context(), cfg)
	if err != nil {
		var se *drain.StartError
		if errors.As(err, &se) {
			return usageError(err)
		}
		return err
	}
	r := drain.Judge(obs, s)
	formulas := drain.Formulas(s, r.Facts)
	code := ExitPass
	if !r.OK || interrupted {
		code = ExitDrainFailed
	}
	if a.json() {
		j := output.DrainJSON{SchemaVersion: output.SchemaVersion, OK: r.OK && !interrupted, ExitCode: code, Pid: obs.Pid,
			Signal: obs.Signal, Interrupted: interrupted, Verdicts: r.Verdicts, Timeline: r.Timeline, Formulas: formulas}
		if interrupted {
			// Cut short: what was seen is not a shutdown to judge.
			j.Verdicts, j.Formulas = []drain.Verdict{}, []drain.Formula{}
		}
		if j.Timeline == nil {
			j.Timeline = []drain.Event{}
		}
		if err := output.JSONLine(a.streams.Out, j); err != nil {
			return err
		}
		return silentExit(code)
	}
	if interrupted {
		fmt.Fprintln(a.streams.Err, "drain-test: interrupted: the service was killed, nothing was judged")
		return silentExit(code)
	}
	w := a.streams.Out
	if a.global.quiet {
		if r.OK {
			return nil
		}
		w = a.streams.Err
	}
	if err := output.DrainReport(w, r, formulas, obs.Pid, obs.Signal, a.streams.OutColor); err != nil {
		return err
	}
	return silentExit(code)
}
