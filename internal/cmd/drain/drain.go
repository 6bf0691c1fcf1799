// Package draincmd is `healthctl drain-test`: run the shutdown experiment
// (internal/drain) or lint a manifest (internal/manifest), and print the
// verdicts.
package draincmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/drain"
	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/drain/judge"
	"github.com/healthctl/healthctl/internal/drain/service"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/manifest"
	"github.com/healthctl/healthctl/internal/proc"
	"github.com/healthctl/healthctl/internal/scheme"
)

// Options is what `healthctl drain-test` runs with, filled by its RunE.
type Options struct {
	Exec                  string
	Argv                  []string // --exec split, or the words after --
	Pid                   int
	Ready, Live, Inflight string
	// InflightBody is --inflight-body, a gRPC --inflight call's request
	// message (a file of serialized protobuf); inflightBody its bytes.
	InflightBody string
	inflightBody []byte
	// Traffic is --traffic (default: the --inflight URL); TrafficExpect
	// --traffic-expect, read into trafficOK.
	Traffic, TrafficExpect string
	trafficOK              func(int) bool
	// TrafficTimeout is --traffic-timeout (0: min(S, 5s)).
	TrafficTimeout              time.Duration
	PreDrain, Shutdown, FlipMax time.Duration
	ReadyTimeout                time.Duration
	Signal                      string
	Sig                         syscall.Signal
	Manifest                    string
	// PreDrainSource and ShutdownSource say where P and S came from, for
	// the lint's findings ("default", "--pre-drain",
	// "HEALTHCTL_DRAIN_TEST_PRE_DRAIN", "config f.yaml: drain-test.pre-drain").
	PreDrainSource, ShutdownSource string
	// probe are the shared probe flags (--cacert, --insecure, -H,
	// --resolve, -4/-6 ...), for the health, in-flight and traffic URLs.
	probe cli.ProbeFlags
	// flagSet names each value's source in errors.
	flagSet *pflag.FlagSet
}

// named is a value with its source, for an error about it.
func (o *Options) named(flag string) string { return cli.Named(o.flagSet, flag) }

// source is where a flag's value came from.
func (o *Options) source(flag string) string { return cli.FlagSource(o.flagSet, flag) }

// NewCmd builds the command; runF replaces the run in flag-parsing tests.
func NewCmd(f *cli.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "drain-test (--exec 'CMD' | --pid N | -- CMD ARGS...) --ready URL --live URL [--inflight URL] | --manifest FILE",
		Short: "Prove a graceful shutdown from the outside, or lint a manifest's shutdown timing",
		Long: `drain-test starts a service (--exec, or a command after --) or attaches to one
(--pid), waits until readiness and liveness answer 200-399, starts slow
requests on --inflight and keeps a kept-alive connection open, then sends
--signal to the process itself (as an orchestrator signals PID 1) and watches
its shutdown: readiness must answer a status >= 400 within --ready-flip-max and
keep it, liveness must stay 200-399 and the listener keep serving during
--pre-drain (on the health port and on the traffic endpoint, --traffic or the
--inflight URL, which gets a new request every 20 ms: each made in the
pre-drain must be served, 200-399 or --traffic-expect with its whole body),
in-flight requests must finish with their full body, and the process must
exit 0 (or 128+N after signal N) within --shutdown-timeout. Every verdict is
judged from one request log, by the time each request was made (-o json:
requests). Each broken invariant is named. Exit 0 when all hold, 7 when any fails; 2 for a set-up problem (a port
already held, a service that exited before the signal, an --inflight URL that
failed before it).

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
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	opts.flagSet = fl
	fl.StringVar(&opts.Exec, "exec", "", "start this command (split into words, no shell) and test its shutdown")
	fl.IntVar(&opts.Pid, "pid", 0, "attach to this running process instead of starting one")
	fl.StringVar(&opts.Ready, "ready", "", "readiness URL: 200-399 before the signal, >= 400 after")
	fl.StringVar(&opts.Live, "live", "", "liveness URL: 200-399 throughout the pre-drain")
	fl.StringVar(&opts.Inflight, "inflight", "", "a slow URL: requests in flight at the signal must complete (also the traffic endpoint without --traffic); "+scheme.InflightCalls()+": unary calls")
	fl.StringVar(&opts.InflightBody, "inflight-body", "", "FILE: a gRPC --inflight call's request message, serialized protobuf (protoc --encode), sent as is (default: the empty message)")
	fl.StringVar(&opts.Traffic, "traffic", "", "the traffic endpoint: a new request on a fresh connection every 20 ms from the signal to the exit (default: the --inflight URL)")
	fl.DurationVar(&opts.TrafficTimeout, "traffic-timeout", 0, "bounds each traffic request, connection and whole body (default min(S, 5s); never the probe's --read-timeout)")
	fl.StringVar(&opts.TrafficExpect, "traffic-expect", "", "statuses that serve a traffic request (default 200-399), e.g. 200,204 or 200-299")
	fl.DurationVar(&opts.PreDrain, "pre-drain", 5*time.Second, "P, PRE_DRAIN_MS: how long readiness is 503 while the listener still serves")
	fl.DurationVar(&opts.Shutdown, "shutdown-timeout", 20*time.Second, "S, SHUTDOWN_TIMEOUT_MS: the process is gone by then")
	fl.DurationVar(&opts.FlipMax, "ready-flip-max", time.Second, "readiness must answer 503 this soon after the signal")
	fl.DurationVar(&opts.ReadyTimeout, "ready-timeout", 30*time.Second, "how long to wait for readiness and liveness before the signal")
	fl.StringVar(&opts.Signal, "signal", "TERM", "the signal sent, by name or number (TERM, INT, QUIT, HUP, USR1, USR2, WINCH for Apache httpd, …)")
	fl.StringVar(&opts.Manifest, "manifest", "", "lint this Kubernetes or Compose file's shutdown timing instead of running anything")
	registerProbeFlags(cmd, &opts.probe)
	return cmd
}

// check validates the flags: every bad value is a usage error naming it.
func (o *Options) check(cmd *cobra.Command, args []string) error {
	changed := cmd.Flags().Changed
	o.PreDrainSource, o.ShutdownSource = "default", "default"
	if changed("pre-drain") || o.PreDrain != 5*time.Second {
		o.PreDrainSource = o.source("pre-drain")
	}
	if changed("shutdown-timeout") || o.Shutdown != 20*time.Second {
		o.ShutdownSource = o.source("shutdown-timeout")
	}
	if o.PreDrain < 0 {
		return cli.UsageErrorf("%s: want 0 or more", o.named("pre-drain"))
	}
	if o.Shutdown <= 0 {
		return cli.UsageErrorf("%s: want more than 0", o.named("shutdown-timeout"))
	}
	if o.Manifest != "" {
		if o.Exec != "" || o.Pid != 0 || len(args) > 0 {
			return cli.UsageErrorf("%s lints a file and runs nothing: it excludes --exec, --pid and a command", o.source("manifest"))
		}
		return nil
	}
	if o.PreDrain >= o.Shutdown {
		return cli.UsageErrorf("%s must be shorter than %s (PRE_DRAIN_MS < SHUTDOWN_TIMEOUT_MS: the pre-drain runs inside the shutdown timeout)", o.named("pre-drain"), o.named("shutdown-timeout"))
	}
	if o.FlipMax <= 0 {
		return cli.UsageErrorf("%s: want more than 0", o.named("ready-flip-max"))
	}
	if o.ReadyTimeout <= 0 {
		return cli.UsageErrorf("%s: want more than 0", o.named("ready-timeout"))
	}
	sig, err := proc.ParseSignal(o.Signal)
	if err != nil {
		return cli.UsageErrorf("%s: want a signal name (TERM, INT, QUIT, HUP, USR1, USR2, WINCH, …) or number", o.named("signal"))
	}
	if sig == syscall.SIGKILL || proc.SignalName(sig) == "SIGSTOP" {
		return cli.UsageErrorf("%s: %s cannot be handled, there is nothing to test", o.named("signal"), proc.SignalName(sig))
	}
	if o.TrafficTimeout < 0 || (changed("traffic-timeout") && o.TrafficTimeout == 0) {
		return cli.UsageErrorf("%s: want more than 0", o.named("traffic-timeout"))
	}
	if o.TrafficExpect != "" {
		set, err := expect.ParseStatusSet(o.TrafficExpect)
		if err != nil {
			return cli.UsageErrorf("%s: %v", o.named("traffic-expect"), err)
		}
		if o.trafficURL() == "" {
			return cli.UsageErrorf("%s needs a traffic endpoint: --traffic URL or --inflight URL", o.named("traffic-expect"))
		}
		o.trafficOK = set.Contains
	}
	o.Sig = sig
	n := 0
	if o.Exec != "" {
		n++
		words, err := manifest.SplitWords(o.Exec)
		if err != nil {
			return cli.UsageErrorf("%s: %v", o.source("exec"), err)
		}
		if len(words) == 0 {
			return cli.UsageErrorf("%s: empty command", o.source("exec"))
		}
		o.Argv = words
	}
	if len(args) > 0 {
		n++
		o.Argv = args
	}
	if changed("pid") {
		n++
		if o.Pid <= 0 {
			return cli.UsageErrorf("%s: want a process ID", o.named("pid"))
		}
		if o.Pid == os.Getpid() {
			return cli.UsageErrorf("%s is healthctl itself", o.named("pid"))
		}
	}
	switch {
	case n == 0:
		return cli.UsageErrorf("drain-test needs a service: --exec 'CMD', a command after --, or --pid N (or --manifest FILE to lint)")
	case n > 1:
		return cli.UsageErrorf("--exec, --pid and a command after -- are mutually exclusive")
	}
	for _, u := range []struct{ flag, val string }{{"ready", o.Ready}, {"live", o.Live}, {"inflight", o.Inflight}, {"traffic", o.Traffic}} {
		if u.val == "" {
			if u.flag == "inflight" || u.flag == "traffic" {
				continue
			}
			return cli.UsageErrorf("--%s URL is required", u.flag)
		}
		pu, err := url.Parse(u.val)
		if u.flag == "inflight" && err == nil && pu.Host != "" && drain.IsGRPC(pu) {
			// A unary call, judged as an HTTP in-flight request is.
			if err := drain.GRPCMethod(pu); err != nil {
				return cli.UsageErrorf("%s: %v", o.named(u.flag), err)
			}
			continue
		}
		// What each flag takes is the scheme row's say: --ready and
		// --live any health endpoint (a gRPC answer other than SERVING,
		// a refused connection, is the flip), --traffic an HTTP request,
		// --inflight that or a gRPC unary call (above).
		row, known := scheme.LookupScheme("")
		if err == nil {
			row, known = scheme.LookupScheme(pu.Scheme)
		}
		takes := func(s scheme.Scheme) bool { return s.Drain.Ready != "" }
		if u.flag == "inflight" || u.flag == "traffic" {
			takes = func(s scheme.Scheme) bool { return s.Options&scheme.AppliesRequest != 0 && s.Drain.Inflight != "" }
		}
		if err == nil && known && pu.Host != "" && takes(row) {
			continue
		}
		want := scheme.SchemeList(true, takes)
		if u.flag == "inflight" {
			want += ", or " + scheme.InflightCalls()
		}
		return cli.UsageErrorf("%s: want %s", o.named(u.flag), want)
	}
	return o.readInflightBody()
}

// readInflightBody reads --inflight-body, which only a gRPC --inflight
// call takes (an HTTP one sends --data).
func (o *Options) readInflightBody() error {
	if o.InflightBody == "" {
		return nil
	}
	if pu, err := url.Parse(o.Inflight); err != nil || pu.Host == "" || !drain.IsGRPC(pu) {
		return cli.UsageErrorf("%s is the request message of a gRPC --inflight call (%s); an HTTP --inflight request sends --data", o.named("inflight-body"), scheme.InflightCalls())
	}
	data, err := inputfile.Read(o.InflightBody, inputfile.Kind{Name: "gRPC request message", Max: drain.MaxGRPCBody})
	if err != nil {
		return cli.UsageErrorf("%s: %v", o.source("inflight-body"), err)
	}
	o.inflightBody = data
	return nil
}

// endpointOptions builds each URL's probe options from the shared probe
// flags: --cacert, --insecure, -H, --resolve, -4/-6 apply to the health
// polls, the in-flight requests and the traffic endpoint alike.
func (o *Options) endpointOptions(f *cli.Factory) (map[evidence.Probe]*scheme.Options, error) {
	tmpl, err := o.probe.Build(f.Getenv)
	if err != nil {
		return nil, err
	}
	out := map[evidence.Probe]*scheme.Options{}
	for which, u := range map[evidence.Probe]string{evidence.Ready: o.Ready, evidence.Live: o.Live, evidence.Inflight: o.Inflight, evidence.Traffic: o.trafficURL()} {
		if u == "" {
			continue
		}
		po, err := tmpl.ForURL(u)
		if err != nil {
			return nil, err
		}
		out[which] = po
	}
	return out, nil
}

// trafficURL is the traffic endpoint: --traffic, else the --inflight URL
// itself (the app's path, not /), else none.
func (o *Options) trafficURL() string {
	if o.Traffic != "" {
		return o.Traffic
	}
	if pu, err := url.Parse(o.Inflight); err == nil && drain.IsGRPC(pu) {
		return "" // a gRPC call is no traffic endpoint: --traffic names one
	}
	return o.Inflight
}

func lintRun(f *cli.Factory, o *Options) error {
	data, err := inputfile.Read(o.Manifest, inputfile.Manifest)
	if err != nil {
		return cli.UsageErrorf("%s: %v", o.source("manifest"), err)
	}
	res, err := manifest.Lint(o.Manifest, data, manifest.Timing{
		PreDrain: o.PreDrain, ShutdownTimeout: o.Shutdown,
		PreDrainSource: o.PreDrainSource, ShutdownTimeoutSource: o.ShutdownSource,
	})
	if err != nil {
		var pe *manifest.ParseError
		if errors.As(err, &pe) {
			return cli.UsageErrorf("%s %s", o.source("manifest"), pe.Error())
		}
		return cli.UsageError(err)
	}
	code := exitcode.Pass
	if len(res.Findings) > 0 {
		code = exitcode.DrainFailed
	}
	code = f.ExitCode(code)
	if err := f.Render(&lintResult{manifest: o.Manifest, res: res, code: code}); err != nil {
		return err
	}
	return cli.SilentExit(code)
}

// Run lints the manifest (--manifest), or starts or attaches to the
// service, signals it, judges its shutdown and prints the verdicts.
func Run(ctx context.Context, f *cli.Factory, o *Options) error {
	if o.Manifest != "" {
		return lintRun(f, o)
	}
	s := evidence.Settings{PreDrain: o.PreDrain, ShutdownTimeout: o.Shutdown, ReadyFlipMax: o.FlipMax}
	opts, err := o.endpointOptions(f)
	if err != nil {
		return err
	}
	cfg := drain.Config{
		Opts: opts,
		Argv: o.Argv, Pid: o.Pid,
		ReadyURL: o.Ready, LiveURL: o.Live, InflightURL: o.Inflight, InflightBody: o.inflightBody, TrafficURL: o.trafficURL(), TrafficOK: o.trafficOK, TrafficTimeout: o.TrafficTimeout,
		Signal: o.Sig, Settings: s, ReadyTimeout: o.ReadyTimeout,
		Stdout: f.Streams.Err, Stderr: f.Streams.Err,
		// The factory's prober makes the health polls (a test's fake or
		// panicking one reaches them).
		Prober: f.Probe,
	}
	if !f.Global.Quiet {
		cfg.Log = func(format string, args ...any) {
			fmt.Fprintf(f.Streams.Err, "drain-test: "+format+"\n", args...)
		}
	}
	if len(o.Argv) > 0 {
		for _, kv := range []struct {
			name string
			d    time.Duration
		}{{"PRE_DRAIN_MS", o.PreDrain}, {"SHUTDOWN_TIMEOUT_MS", o.Shutdown}} {
			want := strconv.FormatInt(kv.d.Milliseconds(), 10)
			if have := f.Getenv(kv.name); have != "" {
				if have != want {
					fmt.Fprintf(f.Streams.Err, "drain-test: WARN: %s=%s in the environment: the service runs with it, but is judged against %s ms\n", kv.name, have, want)
				}
				continue
			}
			cfg.Env = append(cfg.Env, kv.name+"="+want)
		}
	}
	// SIGINT/SIGTERM must end the run gracefully (the service killed or
	// left alone, the right exit code) from the first request on.
	f.SignalsCaught()
	obs, interrupted, err := drain.Run(ctx, cfg)
	if err != nil {
		var se *service.StartError
		var sue *drain.SetupError
		if errors.As(err, &se) || errors.As(err, &sue) {
			return cli.UsageError(err)
		}
		return err
	}
	r := judge.Judge(obs, s)
	formulas := judge.Formulas(s, r.Facts)
	code := exitcode.Pass
	switch {
	case interrupted:
		// The process exits with the signal's code (130/143): say so.
		code = f.SignalCode()
	case r.Unknown():
		// Failures seen while drain-test itself was starved: unknown,
		// not the service's.
		code = exitcode.Unknown
	case !r.OK:
		code = exitcode.DrainFailed
	}
	code = f.ExitCode(code)
	if err := f.Render(&runResult{r: r, obs: obs, formulas: formulas, interrupted: interrupted, code: code, pid: o.Pid}); err != nil {
		return err
	}
	return cli.SilentExit(code)
}
