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
