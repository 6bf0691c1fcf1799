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
	"github.com/healthctl/healthctl/internal/state"
)

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
