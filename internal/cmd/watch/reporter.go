package watchcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/heartbeat"
	"github.com/healthctl/healthctl/internal/listen"
	"github.com/healthctl/healthctl/internal/metrics"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/proxyenv"
	statestore "github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/sweepfiles"
	"github.com/healthctl/healthctl/internal/sweepreport"
	"github.com/healthctl/healthctl/internal/version"
	"github.com/healthctl/healthctl/internal/watch"

	"github.com/healthctl/healthctl/internal/words"
)

// watchReporter prints each sweep, saves the state and writes the metrics.
type watchReporter struct {
	f    *cli.Factory
	opts *Options
	w    *watch.Watcher
	// files are --state's and the metrics' (--prom-file, --listen).
	files   *sweepfiles.Files
	shard   string
	shardOf watch.Shard
	// latest is each target's last probed item, kept only for the
	// metrics of a long-running watch (latestOn).
	latestOn bool
	latest   watch.Latest
	// svc is --listen's service: each sweep's metrics and status are
	// published to it together.
	svc       *listen.Service
	sweeps    int
	redeploys int
	// written is how long the last sweep's files took to write, for its
	// JSON line.
	written sweepfiles.Written
	// memLimit sets a long-running watch's soft memory limit for n
	// targets, own of them with a template of their own (nil: a
	// GOMEMLIMIT of the user's, or --once).
	memLimit func(n, own int)
	// heartbeat is --heartbeat's pinger (nil without it).
	heartbeat *heartbeat.Sender
}

// newHeartbeat is the --heartbeat of opts (nil without one); its proxy is
// the probe's rule over the same environment and --noproxy.
func newHeartbeat(ctx context.Context, f *cli.Factory, opts *Options) *heartbeat.Sender {
	if opts.heartbeatURL == nil {
		return nil
	}
	p := &heartbeat.Pinger{URL: opts.heartbeatURL, Timeout: opts.HeartbeatTimeout, UserAgent: "healthctl/" + version.String(),
		Proxy: proxyenv.FromEnv(f.Getenv, opts.Flags.Input().NoProxy)}
	return heartbeat.NewSender(ctx, p, opts.source("heartbeat"), opts.HeartbeatOnFailure, opts.HeartbeatStart, f.Streams.Err)
}

// ping is --heartbeat's after sweep s, whose report ended with err.
func (r *watchReporter) ping(ctx context.Context, s *watch.Sweep, err error) {
	if r.heartbeat != nil {
		r.heartbeat.After(ctx, s.N, s.Interrupted, s.Fail > 0, sweepreport.Line(s), err)
	}
}

// save writes the watcher's current state to the state file.
func (r *watchReporter) save() error {
	return r.files.Save(r.w.State())
}

// report handles one finished sweep; its error is a state or metrics file
// that could not be written.
func (r *watchReporter) report(s *watch.Sweep) error {
	r.sweeps++
	r.redeploys += s.Redeploys
	latest := s.Items // --once: a target interrupted has a zero Result, as one never probed
	if r.latestOn {
		// The targets of now (a SIGHUP may have reloaded them), in
		// order: a target kept keeps its last item.
		latest = r.latest.Update(s, r.w.Targets())
	}
	var st *statestore.File
	if r.files.Store != nil || r.files.Metrics() {
		if r.opts.Once {
			// Every probe and hook of the one sweep has ended: the
			// state itself, not a copy (100,000 targets' state is ~30 MB).
			st = r.w.FinalState()
		} else {
			// One copy for the file and the metrics alike.
			st = r.w.State()
		}
	}
	written, errs := r.files.Write(st, metrics.Input{Latest: latest, State: st, Sweep: s, Shard: r.shard})
	r.written = written
	return r.finish(s, errs)
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
	res := &sweepreport.Result{Sweep: s, Shard: r.shard, Once: r.opts.Once, Code: code, Fold: r.f.ExitCode,
		StateWrite: r.written.State, MetricsWrite: r.written.Metrics}
	werr := r.f.Render(res)
	errw := r.f.Streams.Err
	switch {
	case len(s.HeldGroups) > 1:
		// One line a held group, each with its own why; then the budget's.
		for i, g := range s.HeldGroups {
			fmt.Fprintf(errw, "healthctl: watch: sweep %d: group %d of %d: %s\n", s.N, i+1, len(s.HeldGroups), g.Why)
		}
		if s.HeldBudget > 0 {
			fmt.Fprintf(errw, "healthctl: watch: sweep %d: %s\n", s.N, s.BudgetWhy)
		}
	case s.HoldWhy != "":
		fmt.Fprintf(errw, "healthctl: watch: sweep %d: %s\n", s.N, s.HoldWhy)
	}
	// Hook runs go to stderr: a failure always, a success and the output
	// when the targets' lines did not carry them (the table).
	for i := range s.Items {
		h := s.Items[i].Hook
		if h == nil || (h.OK && res.WroteLines()) {
			continue
		}
		verdict := "ran"
		switch {
		case h.Interrupted:
			verdict = "INTERRUPTED (its redeploy stays pending)"
		case !h.OK:
			verdict = "FAILED"
		}
		fmt.Fprintf(errw, "healthctl: watch: --on-redeploy for target %q %s: %s\n", s.Items[i].Endpoint.Name, verdict, h.Status)
		if !res.WroteLines() && h.Output != "" {
			for _, l := range output.UntrustedLines(h.Output) {
				fmt.Fprintf(errw, "  | %s\n", l)
			}
			if h.Truncated {
				fmt.Fprintf(errw, "  | (output cut at %d bytes)\n", watch.HookMaxOutput)
			}
		}
	}
	return werr
}

// reload is SIGHUP's: the targets file and --probe-modules read again.
func (r *watchReporter) reload() {
	r.reloadTargets()
	r.reloadModules()
}

// reloadModules reads --probe-modules again (as POST /-/reload does): a
// file that no longer loads keeps the modules in force and says why.
func (r *watchReporter) reloadModules() {
	if r.svc == nil || r.opts.ProbeModules == "" || r.svc.ModuleSet() == nil {
		return
	}
	errw := r.f.Streams.Err
	n, err := r.svc.ModuleSet().Reload()
	if err != nil {
		fmt.Fprintf(errw, "healthctl: watch: SIGHUP: %s not reloaded, keeping the %s in force: %s\n",
			r.opts.ProbeModules, words.Plural(n, "module"), cli.OneLine(err.Error()))
		return
	}
	fmt.Fprintf(errw, "healthctl: watch: SIGHUP: reloaded %s: %s\n", r.opts.ProbeModules, words.Plural(n, "module"))
}

// reloadTargets reads the targets file again: the watcher keeps each
// target's history by name; a file that no longer reads keeps the targets
// in force and says why.
func (r *watchReporter) reloadTargets() {
	errw := r.f.Streams.Err
	if r.opts.TargetsFile == "" {
		fmt.Fprintf(errw, "healthctl: watch: SIGHUP: no --targets file to reload; going on with the same %s\n", words.Plural(len(r.w.Targets()), "target"))
		return
	}
	before := r.w.Targets()
	targets, own, err := buildTargets(r.f, r.opts)
	if err != nil {
		fmt.Fprintf(errw, "healthctl: watch: SIGHUP: %s not reloaded, keeping the %d targets in force: %s\n",
			r.opts.TargetsFile, len(before), cli.OneLine(err.Error()))
		return
	}
	targets = r.shardOf.Filter(targets)
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
	if r.memLimit != nil {
		r.memLimit(len(targets), own)
	}
	fmt.Fprintf(errw, "healthctl: watch: SIGHUP: reloaded %s: %d targets (%d new, %d gone; history kept by name)\n",
		r.opts.TargetsFile, len(targets), added, len(had))
}
