// Package watchcmd is `healthctl watch`: build the targets, sweep them once
// or on a cadence, print each sweep, save the state and write the metrics.
package watchcmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/metrics"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	statestore "github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/target"
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

Exit codes (--once): 0 no redeploy, 8 at least one redeploy decision,
2 usage, targets file or state file error (also: the state file stayed locked
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
	return cmd
}

// Run validates everything, then sweeps once or until a signal.
func Run(ctx context.Context, f *cli.Factory, opts *Options) error {
	src := opts.source
	if src == nil {
		src = func(name string) string { return "--" + name }
	}
	switch {
	case opts.interval <= 0:
		return cli.UsageErrorf("%s %v: must be positive", src("interval"), opts.interval)
	case opts.concurrency < 0:
		return cli.UsageErrorf("%s %d: want at least 1 (0: the default)", src("concurrency"), opts.concurrency)
	case opts.hookTimeout <= 0:
		return cli.UsageErrorf("%s %v: must be positive", src("hook-timeout"), opts.hookTimeout)
	case opts.lockTimeout < 0:
		return cli.UsageErrorf("%s %v: must not be negative", src("lock-timeout"), opts.lockTimeout)
	case opts.listen != "" && opts.once:
		return cli.UsageErrorf("%s serves metrics in long-running mode: drop --once (use --prom-file with --once)", src("listen"))
	case len(opts.URLs) == 0 && opts.targetsFile == "":
		return cli.UsageErrorf("watch: no targets (usage: healthctl watch [URL...] [--targets FILE])")
	}
	var shard watch.Shard
	if opts.shard != "" {
		s, err := watch.ParseShard(opts.shard)
		if err != nil {
			return cli.UsageErrorf("%s: %v", quoteValue(src("shard"), opts.shard), err)
		}
		shard = s
	}
	settings, err := opts.policy.Settings()
	if err != nil {
		return err
	}
	if opts.promFile != "" {
		if st, err := os.Stat(filepath.Dir(opts.promFile)); err != nil || !st.IsDir() {
			return cli.UsageErrorf("%s %s: its directory does not exist", src("prom-file"), opts.promFile)
		}
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

	cfg := watch.Config{Targets: targets, Settings: settings, Concurrency: concurrency, Interval: opts.interval}
	if opts.onRedeploy != "" {
		cfg.Hook = watch.ShellHook(opts.onRedeploy, opts.hookTimeout)
	}
	w := watch.New(cfg, file)
	r := &watchReporter{f: f, opts: opts, w: w, store: store, shard: shard.String(),
		jsonOut:   f.JSON() || (!f.Streams.OutTTY && !opts.table),
		metricsOn: opts.promFile != "" || opts.listen != ""}
	if r.metricsOn && !opts.once {
		// Sweeps overlap and skip targets: the metrics need each target's
		// last probed item. One sweep (--once) is its own latest.
		r.latest = make([]watch.Item, len(targets))
		for i, t := range targets {
			r.latest[i].Target = t
		}
	}
	r.metrics.Store(&[]byte{})

	if opts.once {
		s := w.Sweep(ctx)
		if err := r.report(s); err != nil {
			return err
		}
		if ctx.Err() != nil {
			fmt.Fprintf(f.Streams.Err, "healthctl: watch interrupted: %s\n", sweepLine(s))
			return cli.SilentExit(exitcode.SIGINT) // run() turns this into 130/143
		}
		if s.Redeploys > 0 {
			return cli.SilentExit(exitcode.Redeploy)
		}
		return nil
	}

	if ln != nil {
		srv := &http.Server{Handler: r.mux(), ReadHeaderTimeout: 5 * time.Second}
		crash.Go(func() { _ = srv.Serve(ln) })
		defer srv.Close()
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

// watchTargets builds the targets of the URL arguments and the targets file,
// with every option validated before anything is probed.
func watchTargets(f *cli.Factory, opts *Options) ([]*watch.Target, error) {
	var out []*watch.Target
	names := map[string]string{}
	add := func(t *watch.Target, where string) error {
		if prev, dup := names[t.Name]; dup {
			return cli.UsageErrorf("%s: target %q given twice (first: %s)", where, t.Name, prev)
		}
		names[t.Name] = where
		out = append(out, t)
		return nil
	}
	if len(opts.URLs) > 0 {
		tmpl, err := opts.flags.Build(f.Getenv)
		if err != nil {
			return nil, err
		}
		for _, raw := range opts.URLs {
			o, err := tmpl.ForURL(raw)
			if err != nil {
				return nil, err
			}
			u := o.Redactor.URL(o.URL)
			if err := add(&watch.Target{Name: u, URL: u, Options: o, Recover: true}, "URL argument"); err != nil {
				return nil, err
			}
		}
	}
	if opts.targetsFile == "" {
		return out, nil
	}
	fts, err := watch.ReadTargets(opts.targetsFile)
	if err != nil {
		return nil, cli.UsageError(err)
	}
	var base *cli.Template
	for i := range fts {
		ft := &fts[i]
		where := fmt.Sprintf("%s:%d", opts.targetsFile, ft.Line)
		t := &watch.Target{Name: ft.Name, Recover: ft.Recover, StartedAt: ft.StartedAt}
		if ft.URL != "" {
			var tmpl *target.Template
			shared := len(ft.Probe) == 0 && !strings.ContainsAny(ft.URL, "@?")
			if shared {
				// Targets without options of their own share one template.
				// Not those whose URL may carry secrets (userinfo, query):
				// each secret is registered with the template's redactor, and
				// thousands of them in one redactor would make every line of
				// output scrub every other target's secrets.
				if base == nil {
					if base, err = opts.flags.Build(f.Getenv); err != nil {
						return nil, err
					}
				}
				tmpl = base.Template
			} else {
				// The file's values over the flags; errors name file, line,
				// target and key (or the flag, for a flag's value).
				in, err := ft.Input(opts.flags.Input(), opts.targetsFile)
				if err == nil {
					tmpl, err = in.Build(f.Getenv)
				}
				if err != nil {
					return nil, cli.UsageError(err)
				}
			}
			raw, src := ft.URL, ft.URLSource(opts.targetsFile)
			o, err := tmpl.ForURLFrom(raw, src)
			if err != nil {
				return nil, cli.UsageError(err)
			}
			t.Options, t.URL = o, o.Redactor.URL(o.URL)
			if shared {
				// A shared template's options are a copy of the template's
				// with this URL: made again for each probe (checked just
				// now), so 10,000 targets do not keep 10,000 copies.
				t.Options = nil
				t.Build = func() (*probe.Options, error) { return tmpl.ForURLFrom(raw, src) }
			}
		}
		if err := add(t, where); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// watchReporter prints each sweep, saves the state and writes the metrics.
type watchReporter struct {
	f       *cli.Factory
	opts    *Options
	w       *watch.Watcher
	store   *statestore.Store
	shard   string
	jsonOut bool
	// metricsOn is --prom-file or --listen.
	metricsOn bool
	// latest is each target's last probed item (reports are serialised),
	// kept only for the metrics of a long-running watch.
	latest    []watch.Item
	metrics   atomic.Pointer[[]byte]
	sweeps    int
	redeploys int
}

// report handles one finished sweep; its error is a state or metrics file
// that could not be written.
func (r *watchReporter) report(s *watch.Sweep) error {
	r.sweeps++
	r.redeploys += s.Redeploys
	latest := s.Items // --once: a target interrupted has a zero Result, as one never probed
	if r.latest != nil {
		for i := range s.Items {
			if it := &s.Items[i]; !it.Skipped && !it.Interrupted {
				r.latest[i] = *it
			}
		}
		latest = r.latest
	}
	r.print(s)
	if r.store == nil && !r.metricsOn {
		return nil
	}
	st := r.w.State()
	var errs []error
	if r.store != nil {
		if err := r.store.Save(st); err != nil {
			errs = append(errs, err)
		}
	}
	in := metrics.Input{Latest: latest, State: st, Sweep: s}
	switch {
	case r.opts.listen != "":
		// /metrics serves the last sweep's bytes.
		var buf bytes.Buffer
		if err := metrics.Write(&buf, in); err != nil {
			errs = append(errs, err)
		}
		b := buf.Bytes()
		r.metrics.Store(&b)
		if r.opts.promFile != "" {
			if err := statestore.WriteFile(r.opts.promFile, b, 0o644); err != nil {
				errs = append(errs, fmt.Errorf("--prom-file: %v", err))
			}
		}
	case r.opts.promFile != "":
		// Straight to the file: 10,000 targets' metrics are ~10 MB.
		err := statestore.WriteFileFunc(r.opts.promFile, 0o644, func(w io.Writer) error { return metrics.Write(w, in) })
		if err != nil {
			errs = append(errs, fmt.Errorf("--prom-file: %v", err))
		}
	}
	return cli.UsageError(errors.Join(errs...))
}

func (r *watchReporter) print(s *watch.Sweep) {
	streams, quiet := r.f.Streams, r.f.Global.Quiet
	if r.jsonOut {
		// One write per buffer, not per target: 10,000 lines per sweep.
		out := bufio.NewWriterSize(streams.Out, 64<<10)
		for i := range s.Items {
			it := &s.Items[i]
			if it.Skipped || it.Interrupted || (quiet && !it.Transition) {
				continue
			}
			_ = output.JSONLine(out, newWatchJSON(it, exitcode.ForOutcome(it.Result.Outcome)))
		}
		if !quiet {
			_ = output.JSONLine(out, newSweepJSON(s, r.shard))
		}
		_ = out.Flush()
	} else {
		if err := watchTable(streams.Out, s, streams.OutColor, quiet); err != nil {
			fmt.Fprintf(streams.Err, "healthctl: watch: table: %v\n", err)
		}
		if !quiet {
			fmt.Fprintln(streams.Out, sweepLine(s))
		}
	}
	// Hook runs go to stderr: a failure always, the output in text mode
	// (JSON carries it in the target's line).
	for i := range s.Items {
		h := s.Items[i].Hook
		if h == nil || (h.OK && r.jsonOut) {
			continue
		}
		verdict := "ran"
		if !h.OK {
			verdict = "FAILED"
		}
		fmt.Fprintf(streams.Err, "healthctl: watch: --on-redeploy for target %q %s: %s\n", s.Items[i].Target.Name, verdict, h.Status)
		if !r.jsonOut && h.Output != "" {
			for _, l := range output.UntrustedLines(h.Output) {
				fmt.Fprintf(streams.Err, "  | %s\n", l)
			}
			if h.Truncated {
				fmt.Fprintf(streams.Err, "  | (output cut at %d bytes)\n", watch.HookMaxOutput)
			}
		}
	}
}

// mux serves /metrics (the last sweep's metrics) and /healthz.
func (r *watchReporter) mux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(*r.metrics.Load())
		metrics.WriteProcess(w, metrics.ReadProcess())
	})
	m.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	return m
}
