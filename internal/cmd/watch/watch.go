// Package watchcmd is `healthctl watch`: build the targets, sweep them once
// or on a cadence, print each sweep, save the state and write the metrics.
package watchcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/heartbeat"
	"github.com/healthctl/healthctl/internal/limits"
	"github.com/healthctl/healthctl/internal/listen"
	"github.com/healthctl/healthctl/internal/policy"
	statestore "github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/sweepfiles"
	"github.com/healthctl/healthctl/internal/sweepreport"
	"github.com/healthctl/healthctl/internal/targetsfile"
	"github.com/healthctl/healthctl/internal/watch"
)

// Options is what `healthctl watch` runs with, filled by its RunE.
type Options struct {
	URLs        []string
	TargetsFile string
	Flags       cli.ProbeFlags
	Policy      cli.PolicyFlags
	Interval    time.Duration
	Once        bool
	StatePath   string
	LockTimeout time.Duration
	OnRedeploy  string
	HookTimeout time.Duration
	PromFile    string
	Listen      string
	// ProbeModules, ProbeAllow and ProbeRate are --listen's /probe
	// (listen.go).
	ProbeModules string
	ProbeAllow   []string
	ProbeRate    float64
	Concurrency  int
	Shard        string
	Fleet        policy.FleetSettings
	// Exit0 is --exit-0-on-decision: --once exits 0 when the sweep ran,
	// whatever it decided (Kubernetes Jobs: a pod that exits 8 is Failed).
	Exit0 bool
	// Heartbeat is --heartbeat URL, pinged after each completed sweep
	// (heartbeat.go); HeartbeatTimeout bounds one ping;
	// HeartbeatOnFailure pings URL/fail when a target failed;
	// HeartbeatStart pings URL/start as each sweep begins.
	Heartbeat          string
	HeartbeatTimeout   time.Duration
	HeartbeatOnFailure bool
	HeartbeatStart     bool
	heartbeatURL       *url.URL
	// flagSet names each value's source in errors ("--shard 3/2",
	// "HEALTHCTL_WATCH_SHARD=3/2"); nil: the flag names.
	flagSet *pflag.FlagSet
}

// named is a value with its source, for an error about it.
func (o *Options) named(flag string) string { return cli.Named(o.flagSet, flag) }

// source is where a flag's value came from, for an error about it.
func (o *Options) source(flag string) string { return cli.FlagSource(o.flagSet, flag) }

// DefaultLockTimeout is how long a run waits for another run's lock on the
// state file.
const DefaultLockTimeout = 30 * time.Second

// NewCmd builds the command; runF replaces Run in flag-parsing tests.
func NewCmd(f *cli.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "watch [URL...] [--targets FILE]",
		Short: "Sweep many targets on a cadence and decide, per target, whether to redeploy",
		Long: `Probe every target concurrently (at most --concurrency at once) every --interval,
and apply the reconciler's policy to each with its history: ignore a blip,
redeploy an outage past the grace window (see healthctl policy). Targets are
URL arguments (named by their redacted URL) and/or the entries of a --targets
YAML file, keyed by name.

--once runs one sweep for cron, a systemd timer or a Kubernetes CronJob, with
the history kept in --state FILE between runs (locked through FILE.lock,
written atomically). --on-redeploy CMD runs through /bin/sh for each redeploy
decision with HEALTHCTL_TARGET, HEALTHCTL_URL (redacted), HEALTHCTL_OUTCOME,
HEALTHCTL_REASON and HEALTHCTL_DECISION_WHY set. --prom-file writes Prometheus
metrics for node_exporter's textfile collector; --listen serves /metrics.

Output: a table per sweep on a terminal (or with -o text), JSON lines
otherwise: one object per target per sweep, then {"sweep":{...}}.

The fleet rule: when --hold-fraction of the probed targets (at least
--hold-min) fail decisively in one sweep, its redeploys are held (hold-fleet:
no hook); --max-redeploys caps one sweep's redeploys (the rest: hold-budget).
With --state, a redeploy is saved before its hook starts (at most once).
In long-running mode SIGHUP reloads the --targets file (history kept by name)
and --probe-modules (as POST /-/reload does).

Exit codes (--once): 0 no redeploy, 8 at least one redeploy decision,
9 every redeploy held by the fleet rule (--exit-0-on-decision: 0 for both,
a sweep that ran is a success), 2 usage, targets file or state file error (also: the state file stayed locked
past --lock-timeout), 74 the state file, the --prom-file or stdout could not be
written, 70 internal error, 130/143 interrupted (the state of
the probes that finished is saved).`,
		Example: `  healthctl watch --once --state /var/lib/healthctl/state.json --targets targets.yaml
  healthctl watch --interval 30s --listen 127.0.0.1:9115 --targets targets.yaml
  healthctl watch --once --failure-threshold 2 --on-redeploy './redeploy.sh "$HEALTHCTL_TARGET"' http://127.0.0.1:8080/health`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.URLs = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fs := cmd.Flags()
	opts.flagSet = fs
	opts.Flags.Register(fs)
	opts.Policy.Register(fs, false)
	fs.StringVar(&opts.TargetsFile, "targets", "", "YAML file of targets (name, url, started_at, headers, expectations, recover)")
	fs.DurationVar(&opts.Interval, "interval", watch.DefaultInterval, "time between sweeps, start to start")
	fs.BoolVar(&opts.Once, "once", false, "run one sweep and exit (0: no redeploy, 8: a redeploy decision)")
	fs.StringVar(&opts.StatePath, "state", "", "JSON file keeping each target's history between runs (locked through FILE.lock)")
	fs.DurationVar(&opts.LockTimeout, "lock-timeout", DefaultLockTimeout, "how long to wait for another run holding --state's lock, then exit 2")
	fs.StringVar(&opts.OnRedeploy, "on-redeploy", "", "shell command run for each redeploy decision (HEALTHCTL_TARGET, HEALTHCTL_URL, ... set)")
	fs.DurationVar(&opts.HookTimeout, "hook-timeout", watch.DefaultHookTimeout, "time limit of one --on-redeploy run (then its process group is killed)")
	fs.StringVar(&opts.PromFile, "prom-file", "", "write Prometheus text metrics to this file after each sweep (atomically; node_exporter textfile collector)")
	fs.StringVar(&opts.Heartbeat, "heartbeat", "", "URL to ping after each completed sweep, whatever the targets did: the watcher is alive (healthchecks.io; a status= query: Uptime Kuma's push)")
	fs.DurationVar(&opts.HeartbeatTimeout, "heartbeat-timeout", heartbeat.DefaultTimeout, "time limit of one --heartbeat ping")
	fs.BoolVar(&opts.HeartbeatOnFailure, "heartbeat-on-failure", false, "ping --heartbeat's failure form (URL/fail, status=down) when a target failed")
	fs.BoolVar(&opts.HeartbeatStart, "heartbeat-start", false, "ping URL/start as each sweep begins (healthchecks.io's run timing)")
	fs.StringVar(&opts.Listen, "listen", "", "ADDR to serve the status page, /status.json, /metrics, /probe and /healthz on (long-running mode; a port alone binds 127.0.0.1)")
	fs.StringVar(&opts.ProbeModules, "probe-modules", "", "blackbox_exporter-style modules FILE for --listen's /probe (default: one module, http_2xx)")
	fs.StringSliceVar(&opts.ProbeAllow, "probe-allow", nil, "host patterns /probe may probe: HOST, HOST:PORT, *.example.com, 127.0.0.0/8 (default: the targets' hosts and ports)")
	fs.Float64Var(&opts.ProbeRate, "probe-rate", listen.DefaultProbeRate, "/probe requests a second at most (then 429)")
	fs.IntVar(&opts.Concurrency, "concurrency", 0, "probes in flight at once (default min(256, (open-file limit - 64) / 2))")
	fs.StringVar(&opts.Shard, "shard", "", "K/N: keep only the targets whose name hashes to K of N (K from 0), to split a fleet")
	def := policy.DefaultFleetSettings()
	fs.Float64Var(&opts.Fleet.HoldFraction, "hold-fraction", def.HoldFraction, "hold a redeploy when this share of the probed targets turned decisive within a sweep of it (chronic failures do not count; 0: off)")
	fs.IntVar(&opts.Fleet.HoldMin, "hold-min", def.HoldMin, "the fewest probed targets for --hold-fraction to apply")
	fs.IntVar(&opts.Fleet.MaxRedeploys, "max-redeploys", 0, "at most N redeploys per sweep, the rest deferred to the next sweep (0: no cap)")
	fs.BoolVar(&opts.Exit0, "exit-0-on-decision", false, "--once: exit 0 when the sweep ran, whatever it decided (not 8 or 9: a Kubernetes Job's pod stays Succeeded; the decisions stay in the JSON and metrics)")
	return cmd
}

// Run validates everything, then sweeps once or until a signal.
func Run(ctx context.Context, f *cli.Factory, opts *Options) error {
	shard, settings, err := check(opts)
	if err != nil {
		return err
	}
	setLimit := opts.Once && f.Getenv("GOMEMLIMIT") == "" && f.SetMemoryLimit != nil
	// One sweep's collector runs when its memory limit asks, not at each
	// doubling of the heap (GOGC): the limit is the budget's line above
	// the sweep's working set (a 10,000-target sweep's live heap is ~15 MB
	// against its 80 MiB), so the heap grows towards it and is collected
	// once or twice, not every ~15 MB (9 times): ~9 % less CPU, peak RSS 62
	// -> 84 MiB, within the budget's 96 (docs/benchmarks.md, "The memory
	// policy"). Never more collections than GOGC's: the runtime collects
	// at the earlier of the two goals. Turned off only once the limit is
	// in place; a GOGC you set is left as it is.
	gcOff := setLimit && f.SetGCPercent != nil && f.Getenv("GOGC") == ""
	limit := func(n, own int) {
		f.SetMemoryLimit(watch.MemoryLimit(n, own))
		if gcOff {
			f.SetGCPercent(-1)
			gcOff = false
		}
	}
	if setLimit && opts.TargetsFile != "" {
		// Reading the targets file is the run's first peak (its YAML tree
		// is ~1.5 KiB a target, garbage once the targets are built): the
		// limit is in place before it, from a count of the file's names.
		if n := targetsfile.Count(opts.TargetsFile); n > 0 {
			limit(n+len(opts.URLs), 0)
		}
	}
	targets, own, err := buildTargets(f, opts)
	if err != nil {
		return err
	}
	// Signals are caught before the state file is locked or a target
	// probed: from here on an interrupted sweep still saves what it has.
	f.SignalsCaught()
	targets = shard.Filter(targets)
	if setLimit {
		// A soft limit for one sweep's fleet, the budget's line above its
		// working set (GOMEMLIMIT, "off" included, wins). Not for a
		// long-running watch: its live heap also holds the served metrics
		// and overlapping sweeps, and a limit sized for one sweep made its
		// collector run ~30 % more (it gets twice this one, below).
		limit(len(targets), own)
	}
	var longLimit func(n, own int)
	if !opts.Once && f.Getenv("GOMEMLIMIT") == "" && f.SetMemoryLimit != nil {
		// A long-running watch's own line: twice one sweep's, so the
		// collector's doubling of a large fleet's live heap stops there
		// (set again for the targets a SIGHUP reloads).
		longLimit = func(n, own int) { f.SetMemoryLimit(watch.LongRunningMemoryLimit(n, own)) }
		longLimit(len(targets), own)
	}
	concurrency := opts.Concurrency
	if concurrency == 0 {
		concurrency = limits.Concurrency()
	}

	var ln net.Listener
	var svc *listen.Service
	if opts.Listen != "" {
		if svc, err = newService(f, opts, targets, concurrency); err != nil {
			return err
		}
		if ln, err = net.Listen("tcp", listen.ListenAddr(opts.Listen)); err != nil {
			return cli.UsageErrorf("%s %s: %v", opts.source("listen"), opts.Listen, err)
		}
		defer ln.Close()
	}

	var store *statestore.Store
	file := statestore.New()
	if opts.StatePath != "" {
		store, file, err = statestore.Open(ctx, opts.StatePath, opts.LockTimeout)
		if err != nil {
			if ctx.Err() != nil {
				return cli.SilentExit(exitcode.SIGINT)
			}
			var se *statestore.Error
			if errors.As(err, &se) {
				// Named by its source: --state "s.json", or
				// HEALTHCTL_WATCH_STATE="s.json".
				return cli.UsageErrorf("%s: %v", opts.named("state"), se.Err)
			}
			return cli.UsageError(err)
		}
		defer store.Close()
		defer crash.OnCrash(func() { store.Close() })()
	}

	// The factory's prober and clock: a test's fake (or panicking)
	// prober reaches watch as it reaches every command.
	cfg := watch.Config{Targets: targets, Settings: settings, Fleet: opts.Fleet, Concurrency: concurrency, Interval: opts.Interval,
		Probe: f.Probe, Now: f.Clock}
	if opts.OnRedeploy != "" {
		cfg.Hook = watch.ShellHook(opts.OnRedeploy, opts.HookTimeout)
	}
	files := &sweepfiles.Files{Store: store, PromFile: opts.PromFile, PromSource: opts.source("prom-file")}
	if svc != nil {
		files.Publish = svc.Publish
	}
	r := &watchReporter{f: f, opts: opts, files: files, shard: shard.String(), shardOf: shard, heartbeat: newHeartbeat(ctx, f, opts),
		svc: svc, memLimit: longLimit}
	if files.Metrics() && !opts.Once {
		// Sweeps overlap and skip targets: the metrics need each target's
		// last probed item. One sweep (--once) is its own latest.
		r.latestOn = true
	}
	if store != nil {
		// At most once: the redeploys are on disk before a hook starts.
		cfg.BeforeHooks = r.save
	}
	if r.heartbeat != nil {
		cfg.SweepStarting = r.heartbeat.Starting
	}
	w := watch.New(cfg, file)
	r.w = w
	for name, at := range w.PendingHooks() {
		fmt.Fprintf(f.Streams.Err, "healthctl: watch: target %q: the --on-redeploy started at %s never reported its end (that run was killed or interrupted); its redeploy is not run again\n",
			name, at.UTC().Format(time.RFC3339))
	}
	if opts.Once {
		return runOnce(ctx, f, w, r, opts.Exit0)
	}
	return runLoop(ctx, f, w, r, ln)
}

// check validates the options that need no file: every bad value is a usage
// error naming its source. It returns the shard and the policy settings.
func check(opts *Options) (watch.Shard, policy.Settings, error) {
	var shard watch.Shard
	switch {
	case opts.Interval <= 0:
		return shard, policy.Settings{}, cli.UsageErrorf("%s: must be positive", opts.named("interval"))
	case opts.Concurrency < 0:
		return shard, policy.Settings{}, cli.UsageErrorf("%s: want at least 1 (0: the default)", opts.named("concurrency"))
	case opts.HookTimeout <= 0:
		return shard, policy.Settings{}, cli.UsageErrorf("%s: must be positive", opts.named("hook-timeout"))
	case opts.LockTimeout < 0:
		return shard, policy.Settings{}, cli.UsageErrorf("%s: must not be negative", opts.named("lock-timeout"))
	case opts.Listen != "" && opts.Once:
		return shard, policy.Settings{}, cli.UsageErrorf("%s serves metrics in long-running mode: drop --once (use --prom-file with --once)", opts.source("listen"))
	case opts.Exit0 && !opts.Once:
		return shard, policy.Settings{}, cli.UsageErrorf("%s is for --once (a long-running watch exits only when stopped)", opts.source("exit-0-on-decision"))
	case len(opts.URLs) == 0 && opts.TargetsFile == "":
		return shard, policy.Settings{}, cli.UsageErrorf("watch: no targets (usage: healthctl watch [URL...] [--targets FILE])")
	}
	if opts.Shard != "" {
		s, err := watch.ParseShard(opts.Shard)
		if err != nil {
			return shard, policy.Settings{}, cli.UsageErrorf("%s: %v", opts.named("shard"), err)
		}
		shard = s
	}
	settings, err := opts.Policy.Settings()
	if err != nil {
		return shard, settings, err
	}
	if err := opts.Fleet.Validate(); err != nil {
		var se *policy.SettingError
		if errors.As(err, &se) {
			return shard, settings, cli.UsageErrorf("%s %s", opts.source(se.Setting), se.Msg)
		}
		return shard, settings, cli.UsageError(err)
	}
	if opts.Heartbeat != "" {
		u, err := heartbeat.Parse(opts.Heartbeat)
		if err != nil {
			// Never the URL itself: its path is the check's key.
			return shard, settings, cli.UsageErrorf("%s: %v", opts.source("heartbeat"), err)
		}
		opts.heartbeatURL = u
		if opts.HeartbeatStart && !heartbeat.HasStart(u) {
			return shard, settings, cli.UsageErrorf("%s: the receiver (a status= query: Uptime Kuma's push) has no start signal", opts.named("heartbeat-start"))
		}
	}
	for _, flag := range []string{"heartbeat-on-failure", "heartbeat-start"} {
		if opts.Heartbeat == "" && opts.flagSet != nil && opts.flagSet.Changed(flag) {
			return shard, settings, cli.UsageErrorf("%s: only means something with --heartbeat", opts.named(flag))
		}
	}
	if opts.HeartbeatTimeout <= 0 {
		return shard, settings, cli.UsageErrorf("%s: must be positive", opts.named("heartbeat-timeout"))
	}
	if err := checkListenFlags(opts); err != nil {
		return shard, settings, err
	}
	if opts.PromFile != "" {
		// Checked before the first probe: exit 2 means nothing probed,
		// nothing run (the state file is checked when it is opened).
		if err := statestore.CheckOutputWritable(opts.PromFile); err != nil {
			return shard, settings, cli.UsageErrorf("%s %s: cannot be written: %v%s", opts.source("prom-file"), opts.PromFile, err, sweepfiles.TextfileHint("/", opts.PromFile))
		}
	}
	return shard, settings, nil
}

// runOnce runs one sweep (cron, a timer, a CronJob): exit 8 when a redeploy
// stands, 9 when the fleet rule held them all, 130/143 when interrupted.
func runOnce(ctx context.Context, f *cli.Factory, w *watch.Watcher, r *watchReporter, exit0 bool) error {
	s := w.Sweep(ctx)
	err := r.report(s)
	r.ping(ctx, s, err)
	r.heartbeat.Wait()
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		fmt.Fprintf(f.Streams.Err, "healthctl: watch interrupted: %s\n", sweepreport.Line(s))
	}
	return cli.SilentExit(onceCode(f, s, ctx.Err() != nil, exit0, false))
}

// onceCode is the one decision of a --once run's exit code, which the
// sweep's JSON exit_code prints and the process exits with: 130/143 when a
// signal cut it short (by the signal), 74 when the state or metrics could
// not be written, 8 when a redeploy stands, 9 when the fleet rule held
// them all, else 0; --exit-0-on-decision turns 8 and 9 into 0 and --exit-1
// every other failure into 1.
func onceCode(f *cli.Factory, s *watch.Sweep, cancelled, exit0, ioErr bool) int {
	code := exitcode.Pass
	switch {
	case s.Interrupted || cancelled:
		return f.ExitCode(f.SignalCode())
	case ioErr:
		code = exitcode.IOError
	case s.Redeploys > 0:
		code = exitcode.Redeploy
	case s.HeldFleet > 0 || s.HeldBudget > 0:
		code = exitcode.Unknown
	}
	if exit0 && (code == exitcode.Redeploy || code == exitcode.Unknown) {
		// The sweep ran: its decisions are in the output and the metrics.
		code = exitcode.Pass
	}
	return f.ExitCode(code)
}

// runLoop sweeps on the cadence until a signal, serving /metrics on ln when
// given and reloading the targets file on SIGHUP.
func runLoop(ctx context.Context, f *cli.Factory, w *watch.Watcher, r *watchReporter, ln net.Listener) error {
	if ln != nil {
		// Capped connections (idle ones give way to new ones) and
		// client windows: its descriptors are a budget apart from the
		// probes'.
		srv, l := listen.Server(r.svc.Handler(), ln, listen.MaxConns(limits.OpenFiles()))
		crash.Go(func() { _ = srv.Serve(l) })
		defer srv.Close()
	}
	if f.CatchSignals != nil {
		// The real process (not an in-process test): SIGHUP reloads the
		// targets file instead of ending the watch.
		stop := onHangup(r.reload)
		defer stop()
	}
	w.Run(ctx, func(s *watch.Sweep) {
		err := r.report(s)
		if err != nil {
			fmt.Fprintf(f.Streams.Err, "healthctl: watch: %s\n", cli.OneLine(err.Error()))
		}
		r.ping(ctx, s, err)
	})
	r.heartbeat.Wait()
	fmt.Fprintf(f.Streams.Err, "healthctl: watch stopped after %d sweeps (%d redeploy decisions)\n", r.sweeps, r.redeploys)
	return cli.SilentExit(exitcode.SIGINT)
}
