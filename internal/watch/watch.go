// Package watch sweeps many targets concurrently on a cadence and applies
// the reconciler's policy to each with its history (SPEC.md §6, seeds/004).
//
// A sweep marks every target it will probe as in flight before it starts; a
// target whose previous probe is still running is skipped and counted, never
// probed twice. Each probe is bounded by its own --max-time, so a hanging
// target delays neither its siblings nor the next sweep, which starts on the
// cadence whatever the previous one is doing.
package watch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/state"
)

// DefaultInterval is the cadence of seeds/004's reconciler.
const DefaultInterval = 60 * time.Second

// Target is one thing watch probes, keyed by Name.
type Target struct {
	Name string
	// URL is the redacted URL, for output and the hook ("" without one).
	URL string
	// Options are the probe's; nil for a target without a URL, which is
	// unreachable/no_url without any I/O.
	Options *probe.Options
	// Build, when set, makes the probe's options afresh for each probe
	// instead of Options (nil then): thousands of targets sharing one
	// template keep their URL between sweeps, not a copy of every option
	// each. The caller has checked it once before the first sweep; an error
	// all the same is the target's result (unreachable/protocol_error).
	Build func() (*probe.Options, error)
	// Recover false means: decide, but never run the hook.
	Recover bool
	// StartedAt is the start the targets file gives (zero: unknown). A later
	// start recorded in the state (a redeploy) wins.
	StartedAt time.Time
}

// Prober runs one probe (probe.Run, or a fake in tests).
type Prober func(ctx context.Context, o *probe.Options) probe.Result

// Hook runs the --on-redeploy command for one redeploy decision.
type Hook func(ctx context.Context, t *Target, r probe.Result, d policy.Decision) *HookResult

// Config is what a Watcher runs with.
type Config struct {
	Targets  []*Target
	Settings policy.Settings
	// Concurrency bounds the probes in flight at once, across sweeps.
	Concurrency int
	Interval    time.Duration
	Probe       Prober
	// Hook is nil when there is no --on-redeploy.
	Hook Hook
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Item is one target's part of one sweep.
type Item struct {
	Target *Target
	// Skipped says the target's previous probe was still running: nothing
	// else in the item is set.
	Skipped bool
	// Interrupted says the sweep was stopped (a signal) before this target's
	// probe finished: its history is untouched.
	Interrupted bool
	Result      probe.Result
	Decision    policy.Decision
	// State is the target's state after this probe.
	State state.Target
	// Previous is the outcome and action of the probe before, if any.
	PrevOutcome classify.Outcome
	PrevAction  policy.Action
	// Transition marks a change of outcome or decision since the previous
	// probe (for a target seen for the first time: any decision but stay).
	Transition bool
	// Hook is the --on-redeploy run, when there was one.
	Hook *HookResult
}

// Sweep is one pass over every target.
type Sweep struct {
	N        int64
	Started  time.Time
	Duration time.Duration
	// Items are in target order.
	Items []Item
	// The counts of the sweep's items.
	Targets, Probed, Skipped, Pass, Fail, Redeploys, HookFailures, Transitions int
	// Interrupted says a signal stopped the sweep before every probe ended.
	Interrupted bool
}

// Watcher holds the targets' state between sweeps.
type Watcher struct {
	cfg      Config
	mu       sync.Mutex
	st       *state.File
	inflight []atomic.Bool
	sem      chan struct{}
	hooks    chan struct{}
	sweeps   atomic.Int64
}

// HookConcurrency bounds the --on-redeploy commands running at once: a mass
// outage (or the watcher's own network failing) must not fork hundreds of
// redeploy scripts at the same moment. The others wait their turn.
const HookConcurrency = 4

// New returns a watcher over cfg's targets starting from st (which it owns
// from now on). Targets no longer configured drop out of the state.
func New(cfg Config, st *state.File) *Watcher {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Probe == nil {
		cfg.Probe = probe.Run
	}
	if st == nil {
		st = state.New()
	}
	keep := make(map[string]state.Target, len(cfg.Targets))
	for _, t := range cfg.Targets {
		if prev, ok := st.Targets[t.Name]; ok {
			keep[t.Name] = prev
		}
	}
	st.Targets = keep
	w := &Watcher{cfg: cfg, st: st, inflight: make([]atomic.Bool, len(cfg.Targets)), sem: make(chan struct{}, cfg.Concurrency),
		hooks: make(chan struct{}, HookConcurrency)}
	w.sweeps.Store(st.Sweeps)
	return w
}

// State returns a copy of the current state, safe to save while sweeps run.
func (w *Watcher) State() *state.File {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := &state.File{SchemaVersion: state.SchemaVersion, Saved: w.cfg.Now(), Sweeps: w.sweeps.Load(),
		Targets: make(map[string]state.Target, len(w.st.Targets))}
	for k, v := range w.st.Targets {
		c.Targets[k] = v
	}
	return c
}

// Sweep probes every target not still in flight, under the concurrency
// bound, and returns when all its probes (and hooks) have ended. A cancelled
// ctx stops it: probes cut short leave their targets' history untouched.
func (w *Watcher) Sweep(ctx context.Context) *Sweep {
	s := &Sweep{N: w.sweeps.Add(1), Started: w.cfg.Now(), Targets: len(w.cfg.Targets)}
	s.Items = make([]Item, len(w.cfg.Targets))
	queue := make([]int, 0, len(w.cfg.Targets))
	for i, t := range w.cfg.Targets {
		s.Items[i].Target = t
		if !w.inflight[i].CompareAndSwap(false, true) {
			s.Items[i].Skipped = true
			w.mu.Lock()
			st := w.st.Targets[t.Name]
			st.Skipped++
			w.st.Targets[t.Name] = st
			s.Items[i].State = st
			w.mu.Unlock()
			continue
		}
		queue = append(queue, i)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	workers := min(w.cfg.Concurrency, len(queue))
	for range workers {
		wg.Add(1)
		go func() {
			defer crash.Recover()
			defer wg.Done()
			for {
				n := int(next.Add(1)) - 1
				if n >= len(queue) {
					return
				}
				i := queue[n]
				w.one(ctx, &s.Items[i])
				w.inflight[i].Store(false)
			}
		}()
	}
	wg.Wait()
	s.Duration = w.cfg.Now().Sub(s.Started)
	for i := range s.Items {
		it := &s.Items[i]
		switch {
		case it.Skipped:
			s.Skipped++
			continue
		case it.Interrupted:
			s.Interrupted = true
			continue
		}
		s.Probed++
		if it.Result.Outcome == classify.Pass {
			s.Pass++
		} else {
			s.Fail++
		}
		if it.Decision.Action == policy.Redeploy {
			s.Redeploys++
		}
		if it.Hook != nil && !it.Hook.OK {
			s.HookFailures++
		}
		if it.Transition {
			s.Transitions++
		}
	}
	return s
}

// one probes one target, decides, updates its state and runs the hook.
func (w *Watcher) one(ctx context.Context, it *Item) {
	if ctx.Err() != nil {
		it.Interrupted = true
		return
	}
	t := it.Target
	var r probe.Result
	if t.Options == nil && t.Build == nil {
		r = probe.Result{URL: t.URL, Outcome: classify.Unreachable, Reason: classify.NoURL,
			Error: "the target has no URL", Timings: probe.Timings{}, Started: w.cfg.Now()}
	} else {
		select {
		case w.sem <- struct{}{}:
		case <-ctx.Done():
			it.Interrupted = true
			return
		}
		r = w.probe(ctx, t)
		<-w.sem
	}
	if r.Canceled {
		it.Interrupted = true
		return
	}
	if r.Started.IsZero() {
		r.Started = w.cfg.Now()
	}
	it.Result = r

	w.mu.Lock()
	prev, seen := w.st.Targets[t.Name]
	h := prev.History
	if t.StartedAt.After(h.StartedAt) {
		h.StartedAt = t.StartedAt
	}
	d, h := policy.Decide(policy.Input{Outcome: r.Outcome, Reason: r.Reason, History: h, Settings: w.cfg.Settings, Now: r.Started})
	next := prev
	next.History = h
	next.LastOutcome, next.LastReason, next.LastAction, next.LastProbe = r.Outcome, r.Reason, d.Action, r.Started
	if d.Action == policy.Redeploy {
		next.Redeploys++
	}
	w.st.Targets[t.Name] = next
	w.mu.Unlock()

	it.Decision, it.State = d, next
	it.PrevOutcome, it.PrevAction = prev.LastOutcome, prev.LastAction
	if seen && prev.LastAction != "" {
		it.Transition = prev.LastOutcome != r.Outcome || prev.LastAction != d.Action || d.Action == policy.Redeploy
	} else {
		it.Transition = d.Action != policy.Stay
	}
	if d.Action == policy.Redeploy && t.Recover && w.cfg.Hook != nil {
		select {
		case w.hooks <- struct{}{}:
			it.Hook = w.cfg.Hook(ctx, t, r, d)
			<-w.hooks
		case <-ctx.Done():
			it.Hook = &HookResult{Status: "not run: interrupted"}
		}
	}
}

// probe runs t's probe with its options, built for this probe when t has
// a Build.
func (w *Watcher) probe(ctx context.Context, t *Target) probe.Result {
	o := t.Options
	if o == nil {
		var err error
		if o, err = t.Build(); err != nil {
			return probe.Result{URL: t.URL, Outcome: classify.Unreachable, Reason: classify.ProtocolError,
				Error: err.Error(), Timings: probe.Timings{}, Started: w.cfg.Now()}
		}
	}
	return w.cfg.Probe(ctx, o)
}

// Run sweeps at once, then every Interval, until ctx is done; report gets
// each sweep as it ends (one at a time, in the order they end). A sweep
// still running when the next is due does not delay it: the targets it still
// probes are skipped by the new one. Run returns once every sweep it started
// has been reported.
func (w *Watcher) Run(ctx context.Context, report func(*Sweep)) {
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	launch := func() {
		wg.Add(1)
		go func() {
			defer crash.Recover()
			defer wg.Done()
			s := w.Sweep(ctx)
			mu.Lock()
			defer mu.Unlock()
			report(s)
		}()
	}
	tick := time.NewTicker(w.cfg.Interval)
	defer tick.Stop()
	launch()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
			launch()
		}
	}
}
