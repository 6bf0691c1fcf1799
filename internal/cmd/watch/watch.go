// Package watchcmd is `healthctl watch`: build the targets, sweep them once
// or on a cadence, print each sweep, save the state and write the metrics.
package watchcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/policy"
	statestore "github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
)

// Options is what `healthctl watch` runs with, filled by its RunE.
type Options struct {
	URLs        []string
	targetsFile string
	flags       cli.ProbeFlags
	policy      cli.PolicyFlags
	interval    time.Duration
	once        bool
	statePath   string
	lockTimeout time.Duration
	onRedeploy  string
	hookTimeout time.Duration
	promFile    string
	listen      string
	concurrency int
	shard       string
	fleet       policy.FleetSettings
	// exit0 is --exit-0-on-decision: --once exits 0 when the sweep ran,
	// whatever it decided (Kubernetes Jobs: a pod that exits 8 is Failed).
	exit0 bool
	// table is set when -o text was asked for explicitly: a table even when
	// stdout is not a terminal.
	table bool
	// source names where a flag's value came from ("--shard",
	// "HEALTHCTL_WATCH_SHARD", "healthctl.yaml: watch.shard").
	source func(flag string) string
}

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
In long-running mode SIGHUP reloads the --targets file (history kept by name).

Exit codes (--once): 0 no redeploy, 8 at least one redeploy decision,
9 every redeploy held by the fleet rule (--exit-0-on-decision: 0 for both,
a sweep that ran is a success), 2 usage, targets file or state file error (also: the state file stayed locked
past --lock-timeout), 70 internal error, 130/143 interrupted (the state of
the probes that finished is saved).`,
		Example: `  healthctl watch --once --state /var/lib/healthctl/state.json --targets targets.yaml
  healthctl watch --interval 30s --listen 127.0.0.1:9115 --targets targets.yaml
  healthctl watch --once --failure-threshold 2 --on-redeploy './redeploy.sh "$HEALTHCTL_TARGET"' http://127.0.0.1:8080/health`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.URLs = args
			if fl := cmd.Flag("output"); fl != nil && fl.Changed && f.Global.Output == "text" {
				opts.table = true
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fs := cmd.Flags()
	opts.source = func(name string) string { return cli.FlagSource(fs, name) }
	opts.flags.Register(fs)
	opts.policy.Register(fs, false)
	fs.StringVar(&opts.targetsFile, "targets", "", "YAML file of targets (name, url, started_at, headers, expectations, recover)")
	fs.DurationVar(&opts.interval, "interval", watch.DefaultInterval, "time between sweeps, start to start")
	fs.BoolVar(&opts.once, "once", false, "run one sweep and exit (0: no redeploy, 8: a redeploy decision)")
	fs.StringVar(&opts.statePath, "state", "", "JSON file keeping each target's history between runs (locked through FILE.lock)")
	fs.DurationVar(&opts.lockTimeout, "lock-timeout", DefaultLockTimeout, "how long to wait for another run holding --state's lock, then exit 2")
	fs.StringVar(&opts.onRedeploy, "on-redeploy", "", "shell command run for each redeploy decision (HEALTHCTL_TARGET, HEALTHCTL_URL, ... set)")
	fs.DurationVar(&opts.hookTimeout, "hook-timeout", watch.DefaultHookTimeout, "time limit of one --on-redeploy run (then its process group is killed)")
	fs.StringVar(&opts.promFile, "prom-file", "", "write Prometheus text metrics to this file after each sweep (atomically; node_exporter textfile collector)")
	fs.StringVar(&opts.listen, "listen", "", "ADDR to serve /metrics and /healthz on (long-running mode)")
	fs.IntVar(&opts.concurrency, "concurrency", 0, "probes in flight at once (default min(256, (open-file limit - 64) / 2))")
	fs.StringVar(&opts.shard, "shard", "", "K/N: keep only the targets whose name hashes to K of N (K from 0), to split a fleet")
	def := policy.DefaultFleetSettings()
	fs.Float64Var(&opts.fleet.HoldFraction, "hold-fraction", def.HoldFraction, "hold a redeploy when this share of the probed targets turned decisive within a sweep of it (chronic failures do not count; 0: off)")
	fs.IntVar(&opts.fleet.HoldMin, "hold-min", def.HoldMin, "the fewest probed targets for --hold-fraction to apply")
	fs.IntVar(&opts.fleet.MaxRedeploys, "max-redeploys", 0, "at most N redeploys per sweep, the rest deferred to the next sweep (0: no cap)")
	fs.BoolVar(&opts.exit0, "exit-0-on-decision", false, "--once: exit 0 when the sweep ran, whatever it decided (not 8 or 9: a Kubernetes Job's pod stays Succeeded; the decisions stay in the JSON and metrics)")
	return cmd
}

// Run validates everything, then sweeps once or until a signal.
func Run(ctx context.Context, f *cli.Factory, opts *Options) error {
	src := opts.source
	if src == nil {
		src = func(name string) string { return "--" + name }
	}
	shard, settings, err := check(opts, src)
	if err != nil {
		return err
	}
	targets, err := watchTargets(f, opts)
	if err != nil {
		return err
	}
	kept := targets[:0]
	for _, t := range targets {
		if shard.Keeps(t.Name) {
			kept = append(kept, t)
		}
	}
	targets = kept
	if opts.once && f.Getenv("GOMEMLIMIT") == "" && f.SetMemoryLimit != nil {
		// A soft limit sized for one sweep's fleet (GOMEMLIMIT, "off"
		// included, wins). Not for a long-running watch: its live heap also
		// holds the served metrics and overlapping sweeps, and a limit sized
		// for one sweep made its collector run ~30 % more.
		f.SetMemoryLimit(watch.MemoryLimit(len(targets)))
	}
	concurrency := opts.concurrency
	if concurrency == 0 {
		concurrency = watch.DefaultConcurrency()
	}

	var ln net.Listener
	if opts.listen != "" {
		if ln, err = net.Listen("tcp", opts.listen); err != nil {
			return cli.UsageErrorf("%s %s: %v", src("listen"), opts.listen, err)
		}
		defer ln.Close()
	}

	var store *statestore.Store
	file := statestore.New()
	if opts.statePath != "" {
		store, file, err = statestore.Open(ctx, opts.statePath, opts.lockTimeout)
		if err != nil {
			if ctx.Err() != nil {
				return cli.SilentExit(exitcode.SIGINT)
			}
			return cli.UsageError(err)
		}
		defer store.Close()
		defer crash.OnCrash(func() { store.Close() })()
	}

	cfg := watch.Config{Targets: targets, Settings: settings, Fleet: opts.fleet, Concurrency: concurrency, Interval: opts.interval}
	if opts.onRedeploy != "" {
		cfg.Hook = watch.ShellHook(opts.onRedeploy, opts.hookTimeout)
	}
	r := &watchReporter{f: f, opts: opts, store: store, shard: shard.String(), shardOf: shard,
		jsonOut:   f.JSON() || (!f.Streams.OutTTY && !opts.table),
		metricsOn: opts.promFile != "" || opts.listen != ""}
	if r.metricsOn && !opts.once {
		// Sweeps overlap and skip targets: the metrics need each target's
		// last probed item. One sweep (--once) is its own latest.
		r.latest = map[string]watch.Item{}
	}
	r.metrics.Store(&[]byte{})
	if store != nil {
		// At most once: the redeploys are on disk before a hook starts.
		cfg.BeforeHooks = r.save
	}
	w := watch.New(cfg, file)
	r.w = w
	for name, at := range w.PendingHooks() {
		fmt.Fprintf(f.Streams.Err, "healthctl: watch: target %q: the --on-redeploy started at %s never reported its end (that run was killed or interrupted); its redeploy is not run again\n",
			name, at.UTC().Format(time.RFC3339))
	}
	if opts.once {
		return runOnce(ctx, f, w, r, opts.exit0)
	}
	return runLoop(ctx, f, w, r, ln)
}

// check validates the options that need no file: every bad value is a usage
// error naming its source. It returns the shard and the policy settings.
func check(opts *Options, src func(string) string) (watch.Shard, policy.Settings, error) {
	var shard watch.Shard
	switch {
	case opts.interval <= 0:
		return shard, policy.Settings{}, cli.UsageErrorf("%s %v: must be positive", src("interval"), opts.interval)
	case opts.concurrency < 0:
		return shard, policy.Settings{}, cli.UsageErrorf("%s %d: want at least 1 (0: the default)", src("concurrency"), opts.concurrency)
	case opts.hookTimeout <= 0:
		return shard, policy.Settings{}, cli.UsageErrorf("%s %v: must be positive", src("hook-timeout"), opts.hookTimeout)
	case opts.lockTimeout < 0:
		return shard, policy.Settings{}, cli.UsageErrorf("%s %v: must not be negative", src("lock-timeout"), opts.lockTimeout)
	case opts.listen != "" && opts.once:
		return shard, policy.Settings{}, cli.UsageErrorf("%s serves metrics in long-running mode: drop --once (use --prom-file with --once)", src("listen"))
	case opts.exit0 && !opts.once:
		return shard, policy.Settings{}, cli.UsageErrorf("%s is for --once (a long-running watch exits only when stopped)", src("exit-0-on-decision"))
	case len(opts.URLs) == 0 && opts.targetsFile == "":
		return shard, policy.Settings{}, cli.UsageErrorf("watch: no targets (usage: healthctl watch [URL...] [--targets FILE])")
	}
	if opts.shard != "" {
		s, err := watch.ParseShard(opts.shard)
		if err != nil {
			return shard, policy.Settings{}, cli.UsageErrorf("%s: %v", quoteValue(src("shard"), opts.shard), err)
		}
		shard = s
	}
	settings, err := opts.policy.Settings()
	if err != nil {
		return shard, settings, err
	}
	if err := opts.fleet.Validate(); err != nil {
		var se *policy.SettingError
		if errors.As(err, &se) {
			return shard, settings, cli.UsageErrorf("%s %s", src(se.Setting), se.Msg)
		}
		return shard, settings, cli.UsageError(err)
	}
	if opts.promFile != "" {
		// Checked before the first probe: exit 2 means nothing probed,
		// nothing run (the state file is checked when it is opened).
		if err := statestore.CheckWritable(opts.promFile); err != nil {
			return shard, settings, cli.UsageErrorf("%s %s: cannot be written: %v", src("prom-file"), opts.promFile, err)
		}
	}
	return shard, settings, nil
}

// runOnce runs one sweep (cron, a timer, a CronJob): exit 8 when a redeploy
// stands, 9 when the fleet rule held them all, 130/143 when interrupted.
func runOnce(ctx context.Context, f *cli.Factory, w *watch.Watcher, r *watchReporter, exit0 bool) error {
	s := w.Sweep(ctx)
	if err := r.report(s); err != nil {
		return err
	}
	if ctx.Err() != nil {
		fmt.Fprintf(f.Streams.Err, "healthctl: watch interrupted: %s\n", sweepLine(s))
		return cli.SilentExit(exitcode.SIGINT) // the root turns this into 130/143
	}
	if exit0 {
		return nil
	}
	if s.Redeploys > 0 {
		return cli.SilentExit(exitcode.Redeploy)
	}
	if s.HeldFleet > 0 || s.HeldBudget > 0 {
		return cli.SilentExit(exitcode.Unknown)
	}
	return nil
}

// runLoop sweeps on the cadence until a signal, serving /metrics on ln when
// given and reloading the targets file on SIGHUP.
func runLoop(ctx context.Context, f *cli.Factory, w *watch.Watcher, r *watchReporter, ln net.Listener) error {
	if ln != nil {
		srv := &http.Server{Handler: r.mux(), ReadHeaderTimeout: 5 * time.Second}
		crash.Go(func() { _ = srv.Serve(ln) })
		defer srv.Close()
	}
	if f.SignalsReady != nil {
		// The real process (not an in-process test): SIGHUP reloads the
		// targets file instead of ending the watch.
		stop := onHangup(r.reload)
		defer stop()
	}
	w.Run(ctx, func(s *watch.Sweep) {
		if err := r.report(s); err != nil {
			fmt.Fprintf(f.Streams.Err, "healthctl: watch: %s\n", cli.OneLine(err.Error()))
		}
	})
	fmt.Fprintf(f.Streams.Err, "healthctl: watch stopped after %d sweeps (%d redeploy decisions)\n", r.sweeps, r.redeploys)
	return cli.SilentExit(exitcode.SIGINT)
}

// quoteValue shows a value after its source the way it was typed:
// HEALTHCTL_X="v" for a variable, --x "v" or "file: key" "v" otherwise.
func quoteValue(source, value string) string {
	if source != "" && !strings.HasPrefix(source, "-") && !strings.ContainsAny(source, " :") && strings.ToUpper(source) == source {
		return fmt.Sprintf("%s=%q", source, value)
	}
	return fmt.Sprintf("%s %q", source, value)
}
