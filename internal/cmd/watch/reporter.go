package watchcmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/listen"
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
	latest map[string]watch.Item
	// svc is --listen's service: each sweep's metrics and status are
	// published to it together.
	svc       *listen.Service
	sweeps    int
	redeploys int
	// saveMu serialises state saves: after a sweep, and before its hooks.
	saveMu sync.Mutex
	// stateWrite and metricsWrite are how long the last sweep's files took
	// to write (0: not written), for its JSON line.
	stateWrite, metricsWrite time.Duration
	// heartbeat is --heartbeat's pinger (nil without it).
	heartbeat *heartbeat
}

// save writes the watcher's current state to the state file.
func (r *watchReporter) save() error {
	return r.saveState(r.w.State())
}

// saveState writes st to the state file.
func (r *watchReporter) saveState(st *statestore.File) error {
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	return r.store.Save(st)
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
				r.latest[it.Endpoint.Name] = *it
			}
		}
		// The targets of now (a SIGHUP may have reloaded them), in order.
		targets := r.w.Targets()
		latest = make([]watch.Item, len(targets))
		keep := make(map[string]watch.Item, len(targets))
		for i, t := range targets {
			it, ok := r.latest[t.Name]
			if !ok {
				it = watch.Item{Endpoint: t}
			}
			latest[i], keep[t.Name] = it, it
		}
		r.latest = keep
	}
	var errs []error
	var st *statestore.File
	if r.store != nil || r.metricsOn {
		if r.opts.Once {
			// Every probe and hook of the one sweep has ended: the
			// state itself, not a copy (100,000 targets' state is ~30 MB).
			st = r.w.FinalState()
		} else {
			// One copy for the file and the metrics alike.
			st = r.w.State()
		}
	}
	r.stateWrite, r.metricsWrite = 0, 0
	// The state file and the metrics are written side by side (each only
	// reads st once Prepare has readied it): ~40 ms each at 10,000 targets.
	var stateErr error
	var saved sync.WaitGroup
	if r.store != nil {
		r.saveMu.Lock()
		write := r.store.Prepare(st)
		t0 := time.Now()
		saved.Go(func() {
			stateErr = write()
			r.stateWrite = max(time.Since(t0), time.Microsecond)
		})
	}
	var metricsErr error
	if r.metricsOn {
		metricsErr = r.writeMetrics(metrics.Input{Latest: latest, State: st, Sweep: s, Shard: r.shard})
	}
	saved.Wait()
	if r.store != nil {
		r.saveMu.Unlock()
	}
	// The state's error first, as when it was written first.
	if stateErr != nil {
		errs = append(errs, cli.WriteError("", stateErr))
	}
	if metricsErr != nil {
		errs = append(errs, metricsErr)
	}
	return r.finish(s, errs)
}

// writeMetrics writes the sweep's metrics: for /metrics (--listen) and to
// --prom-file; the error is the first write's, ready for the exit (74).
func (r *watchReporter) writeMetrics(in metrics.Input) error {
	t0 := time.Now()
	var err error
	switch {
	case r.opts.Listen != "":
		// /metrics serves the last sweep's bytes.
		var buf bytes.Buffer
		if werr := metrics.Write(&buf, in); werr != nil {
			err = cli.WriteError("metrics", werr)
		}
		b := buf.Bytes()
		r.svc.Publish(in, b)
		if r.opts.PromFile != "" && err == nil {
			if werr := statestore.WriteFile(r.opts.PromFile, b, 0o644); werr != nil {
				err = cli.WriteError(r.opts.source("prom-file")+" "+r.opts.PromFile, werr)
			}
		}
	case r.opts.PromFile != "":
		// Straight to the file: 10,000 targets' metrics are ~10 MB.
		werr := statestore.WriteOutputFunc(r.opts.PromFile, 0o644, func(w io.Writer) error { return metrics.Write(w, in) })
		if werr != nil {
			err = cli.WriteError(r.opts.source("prom-file")+" "+r.opts.PromFile, werr)
		}
	}
	if r.opts.PromFile != "" {
		r.metricsWrite = max(time.Since(t0), time.Microsecond)
	}
	return err
}

// finish prints the sweep and returns the files' errors (joined: a
// *WriteError each, so the run exits 74) and then stdout's.
func (r *watchReporter) finish(s *watch.Sweep, errs []error) error {
	code := exitcode.Pass
	if r.opts.Once {
		code = onceCode(r.f, s, r.f.Signal() != nil, r.opts.Exit0, len(errs) > 0)
	}
	if err := r.print(s, code); err != nil {
		errs = append(errs, err)
	}
	// Each is a *WriteError: the run exits 74.
	return errors.Join(errs...)
}

// print renders the sweep; code is the --once run's exit code (the sweep
// object's exit_code), unused in long-running mode. Its error is stdout's.
func (r *watchReporter) print(s *watch.Sweep, code int) error {
	streams, quiet := r.f.Streams, r.f.Global.Quiet
	var werr error
	if r.jsonOut {
		// One write per buffer, not per target: 10,000 lines per sweep.
		out := bufio.NewWriterSize(streams.Out, 64<<10)
		// Encoded on every core, written in order: 10,000 lines took a
		// tenth of a --once run on one.
		// A line each, pointing at its item: no line's value is made
		// unless encoding/json must write it (itemLine).
		lines := make([]itemLine, len(s.Items))
		fold := r.f.ExitCode
		_ = output.JSONLines(out, len(s.Items), func(i int) (any, bool) {
			it := &s.Items[i]
			if it.Skipped || it.Interrupted || (quiet && !it.Transition) {
				return nil, false
			}
			lines[i] = itemLine{it: it, fold: fold}
			return &lines[i], true
		})
		if !quiet {
			j := newSweepJSON(s, r.shard)
			if r.stateWrite > 0 {
				ms := output.JSONMillis(r.stateWrite)
				j.Sweep.StateWriteMS = &ms
			}
			if r.metricsWrite > 0 {
				ms := output.JSONMillis(r.metricsWrite)
				j.Sweep.MetricsWriteMS = &ms
			}
			if r.opts.Once {
				j.Sweep.ExitCode = &code
			}
			_ = output.JSONLine(out, j)
		}
		// A bufio.Writer keeps its first write error: Flush returns it.
		werr = cli.WriteError("stdout", out.Flush())
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
		fmt.Fprintf(streams.Err, "healthctl: watch: --on-redeploy for target %q %s: %s\n", s.Items[i].Endpoint.Name, verdict, h.Status)
		if !r.jsonOut && h.Output != "" {
			for _, l := range output.UntrustedLines(h.Output) {
				fmt.Fprintf(streams.Err, "  | %s\n", l)
			}
			if h.Truncated {
				fmt.Fprintf(streams.Err, "  | (output cut at %d bytes)\n", watch.HookMaxOutput)
			}
		}
	}
	return werr
}

// reload reads the targets file again (SIGHUP): the watcher keeps each
// target's history by name; a file that no longer reads keeps the targets
// in force and says why.
func (r *watchReporter) reload() {
	errw := r.f.Streams.Err
	if r.opts.TargetsFile == "" {
		fmt.Fprintf(errw, "healthctl: watch: SIGHUP: no --targets file to reload; going on with the same %s\n", output.Plural(len(r.w.Targets()), "target"))
		return
	}
	before := r.w.Targets()
	targets, err := watchTargets(r.f, r.opts)
	if err != nil {
		fmt.Fprintf(errw, "healthctl: watch: SIGHUP: %s not reloaded, keeping the %d targets in force: %s\n",
			r.opts.TargetsFile, len(before), cli.OneLine(err.Error()))
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
		r.opts.TargetsFile, len(targets), added, len(had))
}
