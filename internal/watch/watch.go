// Package watch sweeps many targets concurrently on a cadence and applies
// the reconciler's policy to each with its history.
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
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/state"
)

// DefaultInterval is the reconciler's cadence: a sweep a minute.
const DefaultInterval = 60 * time.Second

// Endpoint is one thing watch probes (a target of the targets file or a
// URL argument, built and validated), keyed by Name.
type Endpoint struct {
	Name string
	// URL is the redacted URL, for output and the hook ("" without one).
	URL string
	// Options are the probe's; nil for a target without a URL, which is
	// unreachable/no_url without any I/O.
	Options *scheme.Options
	// Build, when set, makes the probe's options afresh for each probe
	// instead of Options (nil then): thousands of targets sharing one
	// template keep their URL between sweeps, not a copy of every option
	// each. The caller has checked it once before the first sweep; an error
	// all the same is the target's result (unreachable/protocol_error).
	Build func() (*scheme.Options, error)
	// Recover false means: decide, but never run the hook.
	Recover bool
	// StartedAt is the start the targets file gives (zero: unknown). A later
	// start recorded in the state (a redeploy) wins.
	StartedAt time.Time
}

// Hook runs the --on-redeploy command for one redeploy decision.
type Hook func(ctx context.Context, t *Endpoint, r probe.Result, d policy.Decision) *HookResult

// Config is what a Watcher runs with.
type Config struct {
	Targets  []*Endpoint
	Settings policy.Settings
	// Fleet is the fleet rule, applied to each sweep after every target's
	// decision (the policy's rule order).
	Fleet policy.FleetSettings
	// Concurrency bounds the probes in flight at once, across sweeps.
	Concurrency int
	Interval    time.Duration
	Probe       probe.Prober
	// Hook is nil when there is no --on-redeploy.
	Hook Hook
	// BeforeHooks, when set, is called once per sweep that is about to run
	// hooks, after the redeploys (restarted grace, hook pending) are in the
	// state and before the first hook starts: it saves the state, so a run
	// killed mid-hook never redeploys the same target again. When it fails,
	// no hook of the sweep runs.
	BeforeHooks func() error
	// SweepStarting, when set, is called as each sweep begins, before its
	// first probe, with the sweep's number (--heartbeat's start ping).
	SweepStarting func(n int64)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Item is one target's part of one sweep.
type Item struct {
	Endpoint *Endpoint
	// Skipped says the target's previous probe was still running: nothing
	// else in the item is set.
	Skipped bool
	// Interrupted says the sweep was stopped (a signal) before this target's
	// probe finished: its history is untouched.
	Interrupted bool
	Result      probe.Result
	// Decision is the policy's decision after the fleet rule. For a
	// redeploy the rule held, Why is the redeploy's own: Decided says it
	// with the rule's reason, which every held item of the sweep shares
	// (a copy each was ~400 bytes a target when a fleet fails at once).
	Decision policy.Decision
	// Streak and OnsetSweep are from the target's state after this
	// probe: its decisive failures in a row, and the sweep its run of them
	// began in (the whole entry is the state's: a copy in each item was
	// 240 bytes a target, 24 MB of a 100,000-target sweep).
	Streak     int
	OnsetSweep int64
	// Previous is the outcome and action of the probe before, if any.
	PrevOutcome classify.Outcome
	PrevAction  policy.Action
	// Transition marks a change of outcome or decision since the previous
	// probe (for a target seen for the first time: any decision but stay).
	Transition bool
	// Hook is the --on-redeploy run, when there was one.
	Hook *HookResult
	// HeldGroup is the fleet group that held this redeploy, from 1 (in
	// Sweep.HeldGroups' order); 0 when the fleet rule held none.
	HeldGroup int32

	// Between the decision and the fleet rule, a redeploy's two possible
	// futures: the state if it goes ahead, and if it is held.
	redeploy, held *state.Entry
	// heldWhy is the fleet rule's reason for holding this redeploy: its
	// group's, shared by the group's held items (nil: not held).
	heldWhy  *string
	seen     bool
	inflight *atomic.Bool
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
	// HeldFleet and HeldBudget count the redeploys the fleet rule held;
	// HoldWhy says why, in one line ("" when none were held).
	HeldFleet, HeldBudget int
	HoldWhy               string
	// HeldGroups are the groups the fleet rule held, each with its size
	// and its own why (several can be held in one sweep).
	HeldGroups []policy.FleetGroup
	// BudgetWhy says why the HeldBudget redeploys were deferred.
	BudgetWhy string
	// Interrupted says a signal stopped the sweep before every probe (or
	// hook) ended.
	Interrupted bool
}

// SweepCounts is a sweep as its JSON says it: the fields watch's sweep
// line (-o json) and the listener's /status.json share, so the two say one
// sweep the same way (times in UTC, durations in milliseconds).
type SweepCounts struct {
	// N numbers the sweeps (it continues across runs sharing a state file).
	N          int64     `json:"n"`
	Started    time.Time `json:"started"`
	DurationMS float64   `json:"duration_ms"`
	// Targets is how many targets the sweep covered (after --shard).
	Targets int `json:"targets"`
	// Probed = Pass + Fail; Skipped were still in flight from a sweep before.
	Probed    int `json:"probed"`
	Skipped   int `json:"skipped"`
	Pass      int `json:"pass"`
	Fail      int `json:"fail"`
	Redeploys int `json:"redeploys"`
}

// Counts is the sweep's SweepCounts.
func (s *Sweep) Counts() SweepCounts {
	return SweepCounts{N: s.N, Started: s.Started.UTC(), DurationMS: output.JSONMillis(s.Duration), Targets: s.Targets,
		Probed: s.Probed, Skipped: s.Skipped, Pass: s.Pass, Fail: s.Fail, Redeploys: s.Redeploys}
}

// Watcher holds the targets' state between sweeps.
type Watcher struct {
	cfg Config
	mu  sync.Mutex
	st  *state.File
	// targets and inflight are parallel; a reload replaces both, keeping
	// each target's in-flight flag by name.
	targets  []*Endpoint
	inflight []*atomic.Bool
	sem      chan struct{}
	hooks    chan struct{}
	sweeps   atomic.Int64
	// whys holds one copy of each decision's why said in this sweep (at
	// most maxWhys): a fleet failing at once says the same few sentences
	// for every target (~190 bytes each, 19 MB of 100,000).
	whys map[string]string
}

// maxWhys bounds the whys kept for sharing in one sweep.
const maxWhys = 1024

// oneWhy returns why as the sweep's one copy of its text. w.mu is held.
func (w *Watcher) oneWhy(why string) string {
	if s, ok := w.whys[why]; ok {
		return s
	}
	if len(w.whys) < maxWhys {
		w.whys[why] = why
	}
	return why
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
	w := &Watcher{cfg: cfg, st: st, sem: make(chan struct{}, cfg.Concurrency),
		hooks: make(chan struct{}, HookConcurrency)}
	w.setTargets(cfg.Targets)
	w.sweeps.Store(st.Sweeps)
	return w
}

// SetTargets replaces the targets (a reload of the targets file): the
// history of each target is kept by name, that of targets no longer
// configured is dropped. Sweeps already running finish with the targets
// they started with.
func (w *Watcher) SetTargets(targets []*Endpoint) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.setTargets(targets)
}

func (w *Watcher) setTargets(targets []*Endpoint) {
	old := make(map[string]*atomic.Bool, len(w.targets))
	for i, t := range w.targets {
		old[t.Name] = w.inflight[i]
	}
	keep := make(map[string]state.Entry, len(targets))
	inflight := make([]*atomic.Bool, len(targets))
	// The new targets' flags are one allocation, not one each: this runs
	// before the first probe, on one core.
	var fresh []atomic.Bool
	for i, t := range targets {
		if prev, ok := w.st.Targets[t.Name]; ok {
			keep[t.Name] = prev
		}
		if f, ok := old[t.Name]; ok {
			inflight[i] = f
			continue
		}
		if len(fresh) == 0 {
			fresh = make([]atomic.Bool, len(targets)-i)
		}
		inflight[i], fresh = &fresh[0], fresh[1:]
	}
	w.st.Targets = keep
	w.targets, w.inflight = targets, inflight
	w.cfg.Targets = targets
}

// Targets returns the targets the next sweep probes.
func (w *Watcher) Targets() []*Endpoint {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.targets
}

// PendingHooks names the targets whose --on-redeploy was started by an
// earlier run and never reported done (that run was killed or interrupted
// mid-hook), with when it started. The redeploy is not run again.
func (w *Watcher) PendingHooks() map[string]time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]time.Time{}
	for name, t := range w.st.Targets {
		if t.HookPending {
			out[name] = t.HookStarted
		}
	}
	return out
}

// State returns a copy of the current state, safe to save while sweeps run.
func (w *Watcher) State() *state.File {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := &state.File{SchemaVersion: state.SchemaVersion, Saved: w.cfg.Now(), Sweeps: w.sweeps.Load(),
		Targets: make(map[string]state.Entry, len(w.st.Targets))}
	for k, v := range w.st.Targets {
		c.Targets[k] = v
	}
	return c
}

// FinalState returns the state itself, not a copy, stamped as State's is:
// for a run whose sweeps, probes and hooks have all ended (--once), which
// must start no other sweep while it uses the state.
func (w *Watcher) FinalState() *state.File {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.st.SchemaVersion, w.st.Saved, w.st.Sweeps = state.SchemaVersion, w.cfg.Now(), w.sweeps.Load()
	return w.st
}

// Sweep probes every target not still in flight, under the concurrency
// bound, decides each, applies the fleet rule to the whole sweep, runs the
// hooks of the redeploys that stand, and returns when all its probes and
// hooks have ended. A cancelled ctx stops it: probes cut short leave their
// targets' history untouched, and hooks cut short stay pending.
func (w *Watcher) Sweep(ctx context.Context) *Sweep {
	w.mu.Lock()
	targets, inflight := w.targets, w.inflight
	w.whys = map[string]string{}
	w.mu.Unlock()
	s := &Sweep{N: w.sweeps.Add(1), Started: w.cfg.Now(), Targets: len(targets)}
	if w.cfg.SweepStarting != nil {
		w.cfg.SweepStarting(s.N)
	}
	s.Items = make([]Item, len(targets))
	queue := make([]int, 0, len(targets))
	for i, t := range targets {
		s.Items[i].Endpoint = t
		s.Items[i].inflight = inflight[i]
		if !inflight[i].CompareAndSwap(false, true) {
			s.Items[i].Skipped = true
			w.mu.Lock()
			st := w.st.Targets[t.Name]
			st.Skipped++
			w.st.Targets[t.Name] = st
			s.Items[i].setState(st)
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
			// Done last: a panic is reported (exit 70) before the sweep
			// can go on to print a result the panic cut short.
			defer wg.Done()
			defer crash.Recover()
			// Each worker's probes hang their contexts on a context of
			// the worker's own: one a probe on the sweep's, from every
			// worker, would contend for its lock.
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			// One registration on it closes the connections of the
			// probe running when it ends, not one of every probe.
			ctx, release := probe.WithCloser(ctx)
			defer release()
			for {
				n := int(next.Add(1)) - 1
				if n >= len(queue) {
					return
				}
				it := &s.Items[queue[n]]
				w.one(ctx, it, s.N)
				if it.redeploy == nil {
					// A redeploy stays in flight until the fleet rule
					// has decided it and its hook has run.
					it.inflight.Store(false)
				}
			}
		}()
	}
	wg.Wait()
	w.fleet(ctx, s)
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
		if it.Hook != nil && it.Hook.Interrupted {
			s.Interrupted = true
		}
		if it.Transition {
			s.Transitions++
		}
	}
	return s
}

// one probes one target in sweep n, decides, and updates its state; a
// redeploy is left for the fleet rule (fleet) to commit or hold.
func (w *Watcher) one(ctx context.Context, it *Item, n int64) {
	if ctx.Err() != nil {
		it.Interrupted = true
		return
	}
	t := it.Endpoint
	var r probe.Result
	if t.Options == nil && t.Build == nil {
		r = probe.Result{URL: t.URL, Outcome: classify.Unreachable, Reason: classify.NoURL,
			Error: "the target has no URL", Started: w.cfg.Now()}
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
	if r.URL == t.URL {
		// The same text: keep one copy (a big fleet's results are kept
		// until the sweep is printed).
		r.URL = t.URL
	}
	it.Result = r

	w.mu.Lock()
	prev, seen := w.st.Targets[t.Name]
	h := prev.History
	if t.StartedAt.After(h.StartedAt) {
		h.StartedAt = t.StartedAt
	}
	in := policy.Input{Outcome: r.Outcome, Reason: r.Reason, History: h, Settings: w.cfg.Settings, Now: r.Started,
		HTTPStatus: r.HTTPStatus, Challenge: output.Untrusted(r.WWWAuthenticate)}
	if r.HTTPStatus == 407 && r.ProxyAuthenticate != "" {
		in.Challenge = output.Untrusted(r.ProxyAuthenticate)
	}
	d, h := policy.Decide(in)
	d.Why = w.oneWhy(d.Why)
	next := prev
	next.History = h
	next.LastOutcome, next.LastReason, next.LastAction, next.LastProbe = r.Outcome, r.Reason, d.Action, r.Started
	next.OnsetSweep = policy.Onset(prev.OnsetSweep, prev.LastAction, d.Action, n)
	if d.Action == policy.Stay {
		// A pass after a redeploy: whatever happened to its hook, the
		// target is back.
		next.HookPending, next.HookStarted = false, time.Time{}
	}
	if d.Action == policy.Redeploy {
		// Copies: next itself stays off the heap for the common probe.
		ahead, held := next, next
		held.History = policy.HeldHistory(in)
		it.redeploy, it.held = &ahead, &held
	} else {
		w.st.Targets[t.Name] = next
	}
	w.mu.Unlock()

	it.Decision = d
	it.setState(next)
	it.seen = seen
	it.PrevOutcome, it.PrevAction = prev.LastOutcome, prev.LastAction
	it.transition()
}

// Decided is the item's decision as said: a held redeploy's why is its
// own, then the fleet rule's.
func (it *Item) Decided() policy.Decision {
	d := it.Decision
	if it.heldWhy != nil {
		d.Why = policy.HeldWhy(d.Action, d.Why, *it.heldWhy)
	}
	return d
}

// setState keeps what the item shows of the target's state after its probe.
func (it *Item) setState(e state.Entry) { it.Streak, it.OnsetSweep = e.Streak, e.OnsetSweep }

// transition sets Transition from the previous state and the decision.
func (it *Item) transition() {
	d := it.Decision
	if it.seen && it.PrevAction != "" {
		it.Transition = it.PrevOutcome != it.Result.Outcome || it.PrevAction != d.Action || d.Action == policy.Redeploy
	} else {
		// First sight: anything but a pass is news (a 401 is decided
		// stay, and still failing).
		it.Transition = d.Action != policy.Stay || it.Result.Outcome != classify.Pass
	}
}

// fleet applies the fleet rule to the sweep's decisions, commits each
// redeploy (or its hold) to the state, saves the state before any hook
// starts (BeforeHooks), then runs the hooks.
func (w *Watcher) fleet(ctx context.Context, s *Sweep) {
	var idx []int
	var actions []policy.Action
	var onsets []int64
	var answers []policy.Answer
	for i := range s.Items {
		it := &s.Items[i]
		if it.Skipped || it.Interrupted {
			continue
		}
		idx = append(idx, i)
		actions = append(actions, it.Decision.Action)
		onsets = append(onsets, it.OnsetSweep)
		answers = append(answers, policy.Answer{Outcome: it.Result.Outcome, Reason: it.Result.Reason, HTTPStatus: it.Result.HTTPStatus})
	}
	v := policy.Fleet(policy.FleetInput{Actions: actions, Onsets: onsets, Answers: answers}, w.cfg.Fleet)
	s.HeldFleet, s.HeldBudget, s.HoldWhy = v.HeldFleet, v.HeldBudget, v.Why
	s.HeldGroups, s.BudgetWhy = v.Groups, v.BudgetWhy
	// One text a group, shared by its held items: each carries its own
	// group's why.
	budgetWhy := v.WhyFor(policy.HoldBudget)
	var hooks []*Item
	w.mu.Lock()
	for n, i := range idx {
		it := &s.Items[i]
		if it.redeploy == nil {
			continue
		}
		var next state.Entry
		switch a := v.Actions[n]; a {
		case policy.Redeploy:
			next = *it.redeploy
			next.Redeploys++
			next.LastRedeploy = it.Result.Started
			if it.Endpoint.Recover && w.cfg.Hook != nil {
				next.HookPending, next.HookStarted = true, w.cfg.Now()
				hooks = append(hooks, it)
			}
		default:
			next = *it.held
			next.LastAction = a
			if a == policy.HoldFleet {
				next.HeldFleet++
			} else {
				next.HeldBudget++
			}
			it.Decision.Action = a
			it.heldWhy = &budgetWhy
			if a == policy.HoldFleet {
				it.heldWhy = &s.HeldGroups[v.Group[n]].Why
				it.HeldGroup = int32(v.Group[n] + 1)
			}
			it.transition()
		}
		it.setState(next)
		w.st.Targets[it.Endpoint.Name] = next
	}
	w.mu.Unlock()
	if len(hooks) > 0 && w.cfg.BeforeHooks != nil {
		if err := w.cfg.BeforeHooks(); err != nil {
			// Without the redeploys on disk a kill mid-hook would redeploy
			// again on the next run: run none.
			for _, it := range hooks {
				it.Hook = &HookResult{Status: "not run: the state could not be saved first: " + err.Error()}
			}
			w.hookDone(hooks, false)
			hooks = nil
		}
	}
	var wg sync.WaitGroup
	for _, it := range hooks {
		wg.Add(1)
		go func() {
			// Done last: a panic is reported (exit 70) before the sweep
			// can go on to print a result the panic cut short.
			defer wg.Done()
			defer crash.Recover()
			select {
			case w.hooks <- struct{}{}:
				it.Hook = w.cfg.Hook(ctx, it.Endpoint, it.Result, it.Decided())
				<-w.hooks
			case <-ctx.Done():
				it.Hook = &HookResult{Status: "not run: interrupted", Interrupted: true}
			}
			w.hookDone([]*Item{it}, it.Hook.Interrupted)
		}()
	}
	wg.Wait()
	for _, i := range idx {
		if it := &s.Items[i]; it.redeploy != nil {
			it.inflight.Store(false)
		}
	}
}

// hookDone records that the hooks of items ended (or will never run):
// their redeploy is no longer pending, unless a signal cut them short.
func (w *Watcher) hookDone(items []*Item, interrupted bool) {
	if interrupted {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, it := range items {
		st := w.st.Targets[it.Endpoint.Name]
		st.HookPending, st.HookStarted = false, time.Time{}
		w.st.Targets[it.Endpoint.Name] = st
		it.setState(st)
	}
}

// probe runs t's probe with its options, built for this probe when t has
// a Build.
func (w *Watcher) probe(ctx context.Context, t *Endpoint) probe.Result {
	o := t.Options
	if o == nil {
		var err error
		if o, err = t.Build(); err != nil {
			return probe.Result{URL: t.URL, Outcome: classify.Unreachable, Reason: classify.ProtocolError,
				Error: err.Error(), Started: w.cfg.Now()}
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
			// Done last: a panic is reported (exit 70) before the sweep
			// can go on to print a result the panic cut short.
			defer wg.Done()
			defer crash.Recover()
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
