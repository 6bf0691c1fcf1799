package watchcmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/metrics"
	"github.com/healthctl/healthctl/internal/output"
	statestore "github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
)

// watchReporter prints each sweep, saves the state and writes the metrics.
type watchReporter struct {
	f       *cli.Factory
	opts    *Options
	w       *watch.Watcher
	store   *statestore.Store
	shard   string
	shardOf watch.Shard
	jsonOut bool
	// metricsOn is --prom-file or --listen.
	metricsOn bool
	// latest is each target's last probed item by name (reports are
	// serialised), kept only for the metrics of a long-running watch.
	latest    map[string]watch.Item
	metrics   atomic.Pointer[[]byte]
	sweeps    int
	redeploys int
	// saveMu serialises state saves: after a sweep, and before its hooks.
	saveMu sync.Mutex
}

// save writes the watcher's current state to the state file.
func (r *watchReporter) save() error {
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	return r.store.Save(r.w.State())
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
				r.latest[it.Target.Name] = *it
			}
		}
		// The targets of now (a SIGHUP may have reloaded them), in order.
		targets := r.w.Targets()
		latest = make([]watch.Item, len(targets))
		keep := make(map[string]watch.Item, len(targets))
		for i, t := range targets {
			it, ok := r.latest[t.Name]
			if !ok {
				it = watch.Item{Target: t}
			}
			latest[i], keep[t.Name] = it, it
		}
		r.latest = keep
	}
	r.print(s)
	if r.store == nil && !r.metricsOn {
		return nil
	}
	var errs []error
	if r.store != nil {
		if err := r.save(); err != nil {
			errs = append(errs, err)
		}
	}
	st := r.w.State()
	in := metrics.Input{Latest: latest, State: st, Sweep: s, Shard: r.shard}
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
		topt := streams.OutTable()
		topt.Width = streams.Columns(r.f.Getenv)
		if err := watchTable(streams.Out, topt, s, streams.OutColor, quiet); err != nil {
			fmt.Fprintf(streams.Err, "healthctl: watch: table: %v\n", err)
		}
		if !quiet {
			fmt.Fprintln(streams.Out, sweepLine(s))
		}
	}
	if s.HoldWhy != "" {
		fmt.Fprintf(streams.Err, "healthctl: watch: sweep %d: %s\n", s.N, s.HoldWhy)
	}
	// Hook runs go to stderr: a failure always, the output in text mode
	// (JSON carries it in the target's line).
	for i := range s.Items {
		h := s.Items[i].Hook
		if h == nil || (h.OK && r.jsonOut) {
			continue
		}
		verdict := "ran"
		switch {
		case h.Interrupted:
			verdict = "INTERRUPTED (its redeploy stays pending)"
		case !h.OK:
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

// reload reads the targets file again (SIGHUP): the watcher keeps each
// target's history by name; a file that no longer reads keeps the targets
// in force and says why.
func (r *watchReporter) reload() {
	errw := r.f.Streams.Err
	if r.opts.targetsFile == "" {
		fmt.Fprintf(errw, "healthctl: watch: SIGHUP: no --targets file to reload; going on with the same %d target%s\n", len(r.w.Targets()), cli.Plural(len(r.w.Targets())))
		return
	}
	before := r.w.Targets()
	targets, err := watchTargets(r.f, r.opts)
	if err != nil {
		fmt.Fprintf(errw, "healthctl: watch: SIGHUP: %s not reloaded, keeping the %d targets in force: %s\n",
			r.opts.targetsFile, len(before), cli.OneLine(err.Error()))
		return
	}
	kept := targets[:0]
	for _, t := range targets {
		if r.shardOf.Keeps(t.Name) {
			kept = append(kept, t)
		}
	}
	targets = kept
	had := make(map[string]bool, len(before))
	for _, t := range before {
		had[t.Name] = true
	}
	added := 0
	for _, t := range targets {
		if !had[t.Name] {
			added++
		}
		delete(had, t.Name)
	}
	r.w.SetTargets(targets)
	fmt.Fprintf(errw, "healthctl: watch: SIGHUP: reloaded %s: %d targets (%d new, %d gone; history kept by name)\n",
		r.opts.targetsFile, len(targets), added, len(had))
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
