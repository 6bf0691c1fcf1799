package watch

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/state"
)

// fake is an in-memory prober: per host, a list of outcomes (the last
// repeats) and how long each probe takes.
type fake struct {
	mu       sync.Mutex
	outcomes map[string][]classify.Outcome
	delay    map[string]time.Duration
	calls    map[string]int
	inflight atomic.Int32
	maxSeen  atomic.Int32
}

func (f *fake) probe(ctx context.Context, o *scheme.Options) probe.Result {
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	host := o.URL.Host
	f.mu.Lock()
	seq := f.outcomes[host]
	i := f.calls[host]
	f.calls[host]++
	d := f.delay[host]
	f.mu.Unlock()
	start := time.Now()
	if d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return probe.Result{Canceled: true}
		}
	}
	out := classify.Pass
	if len(seq) > 0 {
		out = seq[min(i, len(seq)-1)]
	}
	reason := map[classify.Outcome]classify.Reason{classify.Pass: classify.OK, classify.Refused: classify.ConnRefused,
		classify.Timeout: classify.HeadersTimeout}[out]
	return probe.Result{URL: "http://" + host, Outcome: out, Reason: reason, Started: start,
		Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseTotal: time.Since(start)})}
}

func newTarget(name string) *Endpoint {
	return &Endpoint{Name: name, URL: "http://" + name, Recover: true, Options: &scheme.Options{URL: &url.URL{Scheme: "http", Host: name}}}
}

func newFake() *fake {
	return &fake{outcomes: map[string][]classify.Outcome{}, delay: map[string]time.Duration{}, calls: map[string]int{}}
}

func TestBlipOutageAndGrace(t *testing.T) {
	P, R := classify.Pass, classify.Refused
	for _, tc := range []struct {
		name string
		seq  []classify.Outcome
		want []policy.Action
	}{
		{"blip", []classify.Outcome{P, R, P, R}, []policy.Action{policy.Stay, policy.IgnoreBlip, policy.Stay, policy.IgnoreBlip}},
		{"outage", []classify.Outcome{R, R, R, P}, []policy.Action{policy.IgnoreBlip, policy.Redeploy, policy.IgnoreGrace, policy.Stay}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.outcomes["a"] = tc.seq
			var hooks atomic.Int32
			st := state.New()
			for i, want := range tc.want {
				// A fresh watcher per sweep, with the state carried over, as
				// --once runs from cron do.
				w := New(Config{Targets: []*Endpoint{newTarget("a")}, Settings: policy.Settings{Grace: time.Minute, FailureThreshold: 2},
					Concurrency: 4, Probe: f.probe,
					Hook: func(context.Context, *Endpoint, probe.Result, policy.Decision) *HookResult {
						hooks.Add(1)
						return &HookResult{OK: true}
					}}, st)
				s := w.Sweep(context.Background())
				if got := s.Items[0].Decision.Action; got != want {
					t.Fatalf("sweep %d: %s, want %s (%s)", i, got, want, s.Items[0].Decision.Why)
				}
				st = w.State()
			}
			wantHooks := int32(0)
			if tc.name == "outage" {
				wantHooks = 1
				if st.Targets["a"].Redeploys != 1 || st.Targets["a"].RecoveryPending {
					t.Fatalf("state %+v", st.Targets["a"])
				}
			}
			if hooks.Load() != wantHooks {
				t.Fatalf("hook ran %d times, want %d", hooks.Load(), wantHooks)
			}
		})
	}
}

func TestRecoverFalseNeverRunsTheHook(t *testing.T) {
	f := newFake()
	f.outcomes["a"] = []classify.Outcome{classify.Refused}
	tg := newTarget("a")
	tg.Recover = false
	w := New(Config{Targets: []*Endpoint{tg}, Settings: policy.DefaultSettings(), Probe: f.probe,
		Hook: func(context.Context, *Endpoint, probe.Result, policy.Decision) *HookResult {
			t.Fatal("hook ran for recover: false")
			return nil
		}}, nil)
	s := w.Sweep(context.Background())
	if s.Items[0].Decision.Action != policy.Redeploy || s.Redeploys != 1 {
		t.Fatalf("want a redeploy decision, got %+v", s.Items[0].Decision)
	}
}

func TestNoURLAndRemovedTargets(t *testing.T) {
	st := state.New()
	st.Targets["gone"] = state.Entry{LastAction: policy.Stay}
	st.Targets["x"] = state.Entry{LastAction: policy.Stay, LastOutcome: classify.Pass}
	w := New(Config{Targets: []*Endpoint{{Name: "x", Recover: true}}, Settings: policy.DefaultSettings()}, st)
	s := w.Sweep(context.Background())
	it := s.Items[0]
	if it.Result.Outcome != classify.Unreachable || it.Result.Reason != classify.NoURL || !it.Transition {
		t.Fatalf("no URL: %+v", it)
	}
	if _, ok := w.State().Targets["gone"]; ok {
		t.Fatal("a removed target stayed in the state")
	}
}

func TestConcurrencyBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		var ts []*Endpoint
		for i := range 50 {
			name := fmt.Sprintf("t%d", i)
			f.delay[name] = 100 * time.Millisecond
			ts = append(ts, newTarget(name))
		}
		w := New(Config{Targets: ts, Settings: policy.DefaultSettings(), Concurrency: 7, Probe: f.probe}, nil)
		s := w.Sweep(context.Background())
		if s.Probed != 50 || f.maxSeen.Load() != 7 {
			t.Fatalf("probed %d, max in flight %d, want 50 and 7", s.Probed, f.maxSeen.Load())
		}
		// 50 probes of 100ms, 7 at a time: 8 rounds.
		if s.Duration != 800*time.Millisecond {
			t.Fatalf("sweep took %v, want 800ms", s.Duration)
		}
	})
}

// A hanging target (its probe lasts 2.5 intervals) never delays the others
// or the cadence; its turns while in flight are skipped and counted.
func TestHangingTargetIsSkippedNotDelaying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		f.delay["slow"] = 25 * time.Second
		f.delay["fast"] = 10 * time.Millisecond
		w := New(Config{Targets: []*Endpoint{newTarget("slow"), newTarget("fast")}, Settings: policy.DefaultSettings(),
			Concurrency: 4, Interval: 10 * time.Second, Probe: f.probe}, nil)
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		var sweeps []*Sweep
		var ends []time.Duration
		go func() {
			time.Sleep(35 * time.Second)
			cancel()
		}()
		w.Run(ctx, func(s *Sweep) {
			sweeps = append(sweeps, s)
			ends = append(ends, time.Since(start))
		})
		if len(sweeps) != 4 {
			t.Fatalf("%d sweeps, want 4 (at 0, 10, 20, 30s)", len(sweeps))
		}
		byN := map[int64]*Sweep{}
		for _, s := range sweeps {
			byN[s.N] = s
			if want := time.Duration(s.N-1) * 10 * time.Second; s.Started.Sub(start) != want {
				t.Fatalf("sweep %d started at %v, want %v: the cadence stretched", s.N, s.Started.Sub(start), want)
			}
		}
		if !byN[2].Items[0].Skipped || !byN[3].Items[0].Skipped || byN[4].Items[0].Skipped {
			t.Fatalf("slow skipped in sweeps 2,3 = %v,%v, 4 = %v; want true,true,false",
				byN[2].Items[0].Skipped, byN[3].Items[0].Skipped, byN[4].Items[0].Skipped)
		}
		if byN[2].Items[1].Skipped || byN[2].Duration != 10*time.Millisecond {
			t.Fatalf("fast was delayed: %+v, sweep took %v", byN[2].Items[1], byN[2].Duration)
		}
		if got := w.State().Targets["slow"].Skipped; got != 2 {
			t.Fatalf("skipped counter %d, want 2", got)
		}
		if f.calls["slow"] != 2 {
			t.Fatalf("slow probed %d times, want 2 (sweeps 1 and 4)", f.calls["slow"])
		}
		// Sweep 4's slow probe was cut by the cancel: interrupted, history untouched.
		if !byN[4].Interrupted {
			t.Fatal("the last sweep should be interrupted")
		}
	})
}

func TestShard(t *testing.T) {
	for _, bad := range []string{"", "1", "3/3", "-1/2", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	counts := make([]int, 3)
	for i := range 3000 {
		name := fmt.Sprintf("target-%d", i)
		n := 0
		for k := range 3 {
			if (Shard{K: k, N: 3}).Keeps(name) {
				counts[k]++
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%s kept by %d shards", name, n)
		}
	}
	for k, c := range counts {
		if c < 800 {
			t.Errorf("shard %d/3 keeps %d of 3000: unbalanced", k, c)
		}
	}
	if !(Shard{}).Keeps("x") {
		t.Error("no shard keeps everything")
	}
	var targets []*Endpoint
	for i := range 30 {
		targets = append(targets, &Endpoint{Name: fmt.Sprintf("target-%d", i)})
	}
	kept := (Shard{K: 1, N: 3}).Filter(slices.Clone(targets))
	var want []*Endpoint
	for _, e := range targets {
		if (Shard{K: 1, N: 3}).Keeps(e.Name) {
			want = append(want, e)
		}
	}
	if len(kept) == 0 || !slices.Equal(kept, want) {
		t.Errorf("Filter kept %d, want the %d Keeps keeps, in order", len(kept), len(want))
	}
	if all := (Shard{}).Filter(slices.Clone(targets)); !slices.Equal(all, targets) {
		t.Error("no shard filters nothing")
	}
}

// A mass outage runs the hooks HookConcurrency at a time, not all at once.
func TestHookConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		var ts []*Endpoint
		for i := range 12 {
			name := fmt.Sprintf("t%d", i)
			f.outcomes[name] = []classify.Outcome{classify.Refused}
			ts = append(ts, newTarget(name))
		}
		var running, most atomic.Int32
		w := New(Config{Targets: ts, Settings: policy.DefaultSettings(), Concurrency: 12, Probe: f.probe,
			Hook: func(context.Context, *Endpoint, probe.Result, policy.Decision) *HookResult {
				n := running.Add(1)
				if n > most.Load() {
					most.Store(n)
				}
				time.Sleep(time.Second)
				running.Add(-1)
				return &HookResult{OK: true}
			}}, nil)
		s := w.Sweep(context.Background())
		if s.Redeploys != 12 || most.Load() != HookConcurrency {
			t.Fatalf("%d redeploys, at most %d hooks at once; want 12 and %d", s.Redeploys, most.Load(), HookConcurrency)
		}
		if s.Duration != 3*time.Second {
			t.Fatalf("sweep took %v, want 3s (12 hooks of 1s, 4 at a time)", s.Duration)
		}
	})
}

// A target with Build is probed with the options it builds, afresh each
// probe; a Build that fails is that target's result, not a crash.
func TestBuildOptionsPerProbe(t *testing.T) {
	f := newFake()
	var builds atomic.Int32
	good := &Endpoint{Name: "b", URL: "http://b", Recover: true, Build: func() (*scheme.Options, error) {
		builds.Add(1)
		return &scheme.Options{URL: &url.URL{Scheme: "http", Host: "b"}}, nil
	}}
	bad := &Endpoint{Name: "c", URL: "http://c", Recover: true, Build: func() (*scheme.Options, error) {
		return nil, fmt.Errorf("no options")
	}}
	w := New(Config{Targets: []*Endpoint{good, bad}, Settings: policy.DefaultSettings(), Probe: f.probe, Concurrency: 2}, nil)
	for range 2 {
		s := w.Sweep(context.Background())
		if it := s.Items[0]; it.Result.Outcome != classify.Pass {
			t.Fatalf("built target: %+v", it.Result)
		}
		if it := s.Items[1]; it.Result.Outcome != classify.Unreachable || it.Result.Reason != classify.ProtocolError || it.Result.Error != "no options" {
			t.Fatalf("failing build: %+v", it.Result)
		}
	}
	if builds.Load() != 2 {
		t.Fatalf("built %d times, want once per probe (2)", builds.Load())
	}
}

// TestFleetHoldAndSaveBeforeHooks: a fleet failing at once is held (the
// streak counts on, no hook, no grace restart); a lone outage is committed
// and saved (BeforeHooks sees the pending marker) before its hook runs, and
// the marker is cleared once the hook has ended.
func TestFleetHoldAndSaveBeforeHooks(t *testing.T) {
	f := newFake()
	var targets []*Endpoint
	for i := range 6 {
		name := fmt.Sprintf("t%d", i)
		f.outcomes[name] = []classify.Outcome{classify.Refused}
		targets = append(targets, newTarget(name))
	}
	var hooks atomic.Int32
	var w *Watcher
	var savedPending bool
	cfg := Config{Targets: targets, Settings: policy.DefaultSettings(), Fleet: policy.DefaultFleetSettings(), Concurrency: 4, Probe: f.probe,
		Hook: func(context.Context, *Endpoint, probe.Result, policy.Decision) *HookResult {
			hooks.Add(1)
			return &HookResult{OK: true}
		},
		BeforeHooks: func() error {
			st := w.State()
			savedPending = st.Targets["t0"].HookPending && st.Targets["t0"].Redeploys == 1 && !st.Targets["t0"].StartedAt.IsZero()
			if hooks.Load() != 0 {
				t.Error("BeforeHooks after a hook")
			}
			return nil
		}}
	w = New(cfg, nil)
	for sweep := 1; sweep <= 2; sweep++ {
		s := w.Sweep(context.Background())
		if s.HeldFleet != 6 || s.Redeploys != 0 || hooks.Load() != 0 || s.HoldWhy == "" {
			t.Fatalf("sweep %d: held %d, redeploys %d, hooks %d", sweep, s.HeldFleet, s.Redeploys, hooks.Load())
		}
		st := w.State().Targets["t3"]
		if st.Streak != sweep || !st.StartedAt.IsZero() || st.HeldFleet != int64(sweep) || st.LastAction != policy.HoldFleet {
			t.Fatalf("sweep %d: held state %+v", sweep, st)
		}
	}
	// The others recover: t0 alone is an outage.
	for i := 1; i < 6; i++ {
		f.outcomes[fmt.Sprintf("t%d", i)] = []classify.Outcome{classify.Pass}
		f.calls[fmt.Sprintf("t%d", i)] = 0
	}
	s := w.Sweep(context.Background())
	if s.Redeploys != 1 || s.HeldFleet != 0 || hooks.Load() != 1 || !savedPending {
		t.Fatalf("lone outage: redeploys %d held %d hooks %d saved pending %v", s.Redeploys, s.HeldFleet, hooks.Load(), savedPending)
	}
	if st := w.State().Targets["t0"]; st.HookPending || !st.RecoveryPending || st.Streak != 0 {
		t.Fatalf("after the hook: %+v", st)
	}
}

// TestSweepSharesWhys: targets decided alike in one sweep (a fleet failing
// at once) share one copy of their why, and each still says its own.
func TestSweepSharesWhys(t *testing.T) {
	f := newFake()
	var ts []*Endpoint
	for i := range 6 {
		name := fmt.Sprintf("t%d", i)
		if i < 4 {
			f.outcomes[name] = []classify.Outcome{classify.Refused}
		}
		ts = append(ts, newTarget(name))
	}
	w := New(Config{Targets: ts, Settings: policy.DefaultSettings(), Concurrency: 3, Probe: f.probe}, nil)
	s := w.Sweep(context.Background())
	first := map[string]*byte{}
	for _, it := range s.Items {
		why := it.Decided().Why
		if p, ok := first[why]; ok && p != unsafe.StringData(it.Decision.Why) {
			t.Errorf("%s: its why %q is a copy of its own", it.Endpoint.Name, why)
		}
		first[why] = unsafe.StringData(it.Decision.Why)
	}
	if len(first) != 2 {
		t.Fatalf("%d whys, want 2 (failing, passing): %v", len(first), first)
	}
}
