package wait

import (
	"context"
	"net/url"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// answer is what the fake server does for one probe: the result, and how
// long the probe takes (a probe still running when ctx ends is cut short).
type answer struct {
	outcome classify.Outcome
	reason  classify.Reason
	took    time.Duration
	retry   *time.Duration
	status  int
}

var (
	pass      = answer{outcome: classify.Pass, reason: classify.OK, took: 2 * time.Millisecond}
	refused   = answer{outcome: classify.Refused, reason: classify.ConnRefused, took: 100 * time.Microsecond}
	status503 = answer{outcome: classify.Unreachable, reason: classify.HTTPStatus, took: 2 * time.Millisecond}
	hang      = answer{outcome: classify.Timeout, reason: classify.HeadersTimeout, took: time.Hour}
)

func (a answer) after(d time.Duration) answer  { a.retry = &d; return a }
func (a answer) taking(d time.Duration) answer { a.took = d; return a }

// fakeProber answers each URL with a function of its attempt number (from 1)
// and the time since the wait began, and records when each probe started.
type fakeProber struct {
	t0      time.Time
	respond map[string]func(n int, at time.Duration) answer
	// dialled is the address each URL's probes report having dialled
	// (none when absent).
	dialled map[string]string

	mu     sync.Mutex
	starts map[string][]time.Duration
}

func newFake(respond map[string]func(n int, at time.Duration) answer) *fakeProber {
	return &fakeProber{t0: time.Now(), respond: respond, starts: map[string][]time.Duration{}}
}

func (f *fakeProber) probe(ctx context.Context, o *scheme.Options) probe.Result {
	u := o.URL.String()
	at := time.Since(f.t0)
	f.mu.Lock()
	f.starts[u] = append(f.starts[u], at)
	n := len(f.starts[u])
	f.mu.Unlock()
	a := f.respond[u](n, at)
	r := probe.Result{URL: u, Outcome: a.outcome, Reason: a.reason, RetryAfter: a.retry, HTTPStatus: a.status, Started: time.Now(), Address: f.dialled[u]}
	t := time.NewTimer(a.took)
	defer t.Stop()
	select {
	case <-t.C:
		return r
	case <-ctx.Done():
		return probe.Result{URL: u, Outcome: classify.Timeout, Reason: classify.HeadersTimeout, Canceled: true}
	}
}

func (f *fakeProber) startsOf(u string) []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.starts[u])
}

func target(t *testing.T, raw string) Endpoint {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return Endpoint{Options: &scheme.Options{URL: u}, URL: raw}
}

type recorder struct {
	mu    sync.Mutex
	names []string
}

func (r *recorder) Count(name string) {
	r.mu.Lock()
	r.names = append(r.names, name)
	r.mu.Unlock()
}

// switchAt answers before until d has passed, then after.
func switchAt(d time.Duration, before, after answer) func(int, time.Duration) answer {
	return func(_ int, at time.Duration) answer {
		if at < d {
			return before
		}
		return after
	}
}

// sequence answers the attempts in order, then repeats the last one.
func sequence(as ...answer) func(int, time.Duration) answer {
	return func(n int, _ time.Duration) answer { return as[min(n, len(as))-1] }
}

func always(a answer) func(int, time.Duration) answer {
	return func(int, time.Duration) answer { return a }
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func run(t *testing.T, cfg Config, f *fakeProber, urls ...string) Summary {
	t.Helper()
	for _, u := range urls {
		cfg.Endpoints = append(cfg.Endpoints, target(t, u))
	}
	cfg.Probe = f.probe
	return Run(t.Context(), cfg)
}

const h1 = "http://app:8080/health"

func TestWaitFirstProbeAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: always(pass)})
		s := run(t, Config{}, f, h1)
		if got := f.startsOf(h1); !slices.Equal(got, []time.Duration{0}) {
			t.Errorf("starts = %v, want [0]", got)
		}
		if !s.Healthy || s.Attempts != 1 || s.Elapsed != pass.took {
			t.Errorf("summary = %+v, want healthy after 1 attempt in %v", s, pass.took)
		}
	})
}

func TestWaitIntervalStartToStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := status503.taking(ms(120))
		f := newFake(map[string]func(int, time.Duration) answer{h1: switchAt(ms(2000), slow, pass)})
		s := run(t, Config{}, f, h1)
		want := []time.Duration{0, ms(500), ms(1000), ms(1500), ms(2000)}
		if got := f.startsOf(h1); !slices.Equal(got, want) {
			t.Errorf("starts = %v, want %v (500ms start to start, the probe's own 120ms included)", got, want)
		}
		if !s.Healthy || s.Elapsed != ms(2000)+pass.took {
			t.Errorf("summary = %+v", s)
		}
	})
}

func TestWaitSlowProbeIsFollowedNotOverlapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: switchAt(ms(1500), status503.taking(ms(700)), pass)})
		run(t, Config{}, f, h1)
		want := []time.Duration{0, ms(700), ms(1400), ms(2100)}
		if got := f.startsOf(h1); !slices.Equal(got, want) {
			t.Errorf("starts = %v, want %v (one in flight; next at once after a probe longer than the interval)", got, want)
		}
	})
}

func TestWaitRefusedReprobesFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: switchAt(ms(1000), refused, pass)})
		s := run(t, Config{}, f, h1)
		starts := f.startsOf(h1)
		for i := 1; i < len(starts); i++ {
			if d := starts[i] - starts[i-1]; d != RefusedRetry {
				t.Fatalf("start %d came %v after the previous one, want %v: %v", i, d, RefusedRetry, starts)
			}
		}
		// 0, 50ms, ..., 950ms refused; 1000ms passes.
		if len(starts) != 21 || !s.Healthy || s.Elapsed != ms(1000)+pass.took {
			t.Errorf("%d probes, summary %+v; want 21 probes, healthy at 1s", len(starts), s)
		}
	})
}

func TestWaitRefusedThenAnswersSlowsToInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: func(_ int, at time.Duration) answer {
			switch {
			case at < ms(100):
				return refused
			case at < ms(1200):
				return status503
			}
			return pass
		}})
		run(t, Config{}, f, h1)
		want := []time.Duration{0, ms(50), ms(100), ms(600), ms(1100), ms(1600)}
		if got := f.startsOf(h1); !slices.Equal(got, want) {
			t.Errorf("starts = %v, want %v", got, want)
		}
	})
}

func TestWaitRefusedRateIsSharedPerHostPort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b, other := "http://app:8080/health", "http://APP:8080/ready", "http://app:9090/health"
		never := always(refused)
		f := newFake(map[string]func(int, time.Duration) answer{a: never, b: never, other: never})
		s := run(t, Config{Timeout: 2 * time.Second}, f, a, b, other)
		var shared []time.Duration
		shared = append(append(shared, f.startsOf(a)...), f.startsOf(b)...)
		slices.Sort(shared)
		// Both first probes go at once; after that the port gets one
		// re-probe per 50ms, whichever URL it is for.
		if shared[0] != 0 || shared[1] != 0 {
			t.Fatalf("first probes at %v, want both at once", shared[:2])
		}
		for i := 2; i < len(shared); i++ {
			if d := shared[i] - shared[i-1]; d < RefusedRetry {
				t.Fatalf("two probes of app:8080 %v apart (at %v), want >= %v", d, shared[i], RefusedRetry)
			}
		}
		if n := len(shared); n > 2*20+1 {
			t.Errorf("%d probes of app:8080 in 2s, want at most 41", n)
		}
		if n := len(f.startsOf(other)); n != 40 {
			t.Errorf("%d probes of app:9090 in 2s, want 40 (its own 20 a second)", n)
		}
		if !s.TimedOut || s.Healthy {
			t.Errorf("summary = %+v, want timed out", s)
		}
	})
}

// TestWaitRefusedRateIsSharedPerDialledAddress: two URLs whose host names
// differ but lead to one address (127.0.0.1:8080 and localhost:8080) share
// that address's 20 re-probes a second.
func TestWaitRefusedRateIsSharedPerDialledAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := "http://127.0.0.1:8080/health", "http://localhost:8080/ready"
		never := always(refused)
		f := newFake(map[string]func(int, time.Duration) answer{a: never, b: never})
		f.dialled = map[string]string{a: "127.0.0.1:8080", b: "127.0.0.1:8080"}
		run(t, Config{Timeout: 2 * time.Second}, f, a, b)
		var shared []time.Duration
		shared = append(append(shared, f.startsOf(a)...), f.startsOf(b)...)
		slices.Sort(shared)
		for i := 2; i < len(shared); i++ {
			if d := shared[i] - shared[i-1]; d < RefusedRetry {
				t.Fatalf("two probes of 127.0.0.1:8080 %v apart (at %v), want >= %v", d, shared[i], RefusedRetry)
			}
		}
		if n := len(shared); n > 2*20+1 {
			t.Errorf("%d probes of 127.0.0.1:8080 in 2s through two host names, want at most 41", n)
		}
	})
}

func TestWaitSuccessesInARowWithFlappingServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		flap := sequence(pass, status503, pass, pass, status503, pass, pass, pass, status503)
		f := newFake(map[string]func(int, time.Duration) answer{h1: flap})
		s := run(t, Config{Successes: 3}, f, h1)
		if !s.Healthy || s.Attempts != 8 || s.Endpoints[0].Streak != 3 {
			t.Errorf("summary = %+v, want healthy at the 8th attempt (the first three passes in a row)", s)
		}
		if got := f.startsOf(h1); got[len(got)-1] != ms(3500) {
			t.Errorf("starts = %v: a pass is followed by the next probe one interval later", got)
		}
	})
}

func TestWaitDoneTargetIsNotProbedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h2 := "http://other:8080/health"
		f := newFake(map[string]func(int, time.Duration) answer{h1: always(pass), h2: switchAt(ms(1000), status503, pass)})
		s := run(t, Config{}, f, h1, h2)
		if n := len(f.startsOf(h1)); n != 1 {
			t.Errorf("%s probed %d times, want once", h1, n)
		}
		if !s.Healthy || s.Attempts != 4 {
			t.Errorf("summary = %+v, want healthy after 1 + 3 attempts", s)
		}
	})
}

func TestWaitCeiling(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			f := newFake(map[string]func(int, time.Duration) answer{h1: always(status503)})
			m := &recorder{}
			s := run(t, Config{Timeout: 2 * time.Second, FailOpen: failOpen, Metrics: m}, f, h1)
			if s.Healthy || !s.TimedOut || s.Aborted || s.FailOpen != failOpen || s.Elapsed != 2*time.Second {
				t.Errorf("fail-open %v: summary = %+v", failOpen, s)
			}
			if s.Attempts != 4 {
				t.Errorf("attempts = %d, want 4 (0, 0.5, 1, 1.5s)", s.Attempts)
			}
			want := []string{MetricStarted, MetricError}
			if failOpen {
				want = []string{MetricStarted, MetricFailOpen}
			}
			if !slices.Equal(m.names, want) {
				t.Errorf("fail-open %v: metrics %v, want %v", failOpen, m.names, want)
			}
		})
	}
}

func TestWaitCulprit(t *testing.T) {
	h2, h3, h4 := "http://b:80/health", "http://c:80/health", "http://d:80/health"
	tests := []struct {
		name      string
		respond   map[string]func(int, time.Duration) answer
		successes int
		index     int
		outcome   classify.Outcome
		reason    classify.Reason
		completed bool
	}{{
		name: "first unhealthy URL in argument order, not the first to fail",
		respond: map[string]func(int, time.Duration) answer{
			h1: always(pass), h2: always(refused), h3: always(hang), h4: always(status503),
		},
		index: 1, outcome: classify.Refused, reason: classify.ConnRefused, completed: true,
	}, {
		name: "a probe cut short by the ceiling does not count",
		respond: map[string]func(int, time.Duration) answer{
			// 503 at 0, 0.5s, 1s; the probe started at 1.5s hangs past the
			// 2s ceiling.
			h1: switchAt(ms(1500), status503, hang),
		},
		index: 0, outcome: classify.Unreachable, reason: classify.HTTPStatus, completed: true,
	}, {
		name:    "none completed: timeout",
		respond: map[string]func(int, time.Duration) answer{h1: always(hang)},
		index:   0, outcome: classify.Timeout, completed: false,
	}, {
		name: "the last completed failure, even when a pass came after it",
		respond: map[string]func(int, time.Duration) answer{
			h1: sequence(answer{outcome: classify.DNS, reason: classify.DNSNXDomain}, refused, pass, hang),
		},
		successes: 2,
		index:     0, outcome: classify.Refused, reason: classify.ConnRefused, completed: true,
	}, {
		name:      "passes too few and no failure: timeout",
		respond:   map[string]func(int, time.Duration) answer{h1: always(pass)},
		successes: 10,
		index:     0, outcome: classify.Timeout, completed: false,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(tt.respond)
				var urls []string
				for _, u := range []string{h1, h2, h3, h4} {
					if tt.respond[u] != nil {
						urls = append(urls, u)
					}
				}
				s := run(t, Config{Timeout: 2 * time.Second, Successes: tt.successes}, f, urls...)
				i, o, r, completed, ok := s.Culprit()
				if !ok || i != tt.index || o != tt.outcome || r != tt.reason || completed != tt.completed {
					t.Errorf("Culprit() = %d %s %s completed=%v ok=%v, want %d %s %s completed=%v",
						i, o, r, completed, ok, tt.index, tt.outcome, tt.reason, tt.completed)
				}
				if s.Elapsed != 2*time.Second {
					t.Errorf("elapsed %v, want the 2s ceiling (a hanging probe is cut short)", s.Elapsed)
				}
			})
		})
	}
}

func TestWaitRetryAfter(t *testing.T) {
	warming := status503.after(2 * time.Second)
	t.Run("ignored by default", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake(map[string]func(int, time.Duration) answer{h1: switchAt(ms(1000), warming, pass)})
			run(t, Config{}, f, h1)
			if got, want := f.startsOf(h1), []time.Duration{0, ms(500), ms(1000)}; !slices.Equal(got, want) {
				t.Errorf("starts = %v, want %v", got, want)
			}
		})
	})
	t.Run("respected", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake(map[string]func(int, time.Duration) answer{h1: switchAt(ms(3000), warming, pass)})
			var nexts []time.Duration
			cfg := Config{RespectRetryAfter: true, Observer: func(e Event) { nexts = append(nexts, e.Next) }}
			run(t, cfg, f, h1)
			// Retry-After counts from the answer (2ms after the start).
			want := []time.Duration{0, ms(2002), ms(4004)}
			if got := f.startsOf(h1); !slices.Equal(got, want) {
				t.Errorf("starts = %v, want %v", got, want)
			}
			if nexts[0] != 2*time.Second {
				t.Errorf("Event.Next = %v, want the 2s Retry-After", nexts[0])
			}
		})
	})
	t.Run("never shorter than the interval", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake(map[string]func(int, time.Duration) answer{h1: switchAt(ms(1000), status503.after(0), pass)})
			run(t, Config{RespectRetryAfter: true}, f, h1)
			if got, want := f.startsOf(h1), []time.Duration{0, ms(500), ms(1000)}; !slices.Equal(got, want) {
				t.Errorf("starts = %v, want %v", got, want)
			}
		})
	})
	// A 429 is the server throttling this client: its Retry-After is
	// honoured without --respect-retry-after, and the ceiling still cuts it.
	throttled := status503
	throttled.status = 429
	t.Run("429 honoured by default", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake(map[string]func(int, time.Duration) answer{h1: switchAt(ms(3000), throttled.after(2*time.Second), pass)})
			run(t, Config{}, f, h1)
			want := []time.Duration{0, ms(2002), ms(4004)}
			if got := f.startsOf(h1); !slices.Equal(got, want) {
				t.Errorf("starts = %v, want %v", got, want)
			}
		})
	})
	t.Run("429 capped by the ceiling", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake(map[string]func(int, time.Duration) answer{h1: always(throttled.after(time.Hour))})
			s := run(t, Config{Timeout: 5 * time.Second}, f, h1)
			if s.Elapsed != 5*time.Second || s.Attempts != 1 || !s.TimedOut {
				t.Errorf("summary = %+v, want given up at the 5s ceiling after 1 attempt", s)
			}
		})
	})
	t.Run("capped by the ceiling", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake(map[string]func(int, time.Duration) answer{h1: always(status503.after(time.Hour))})
			s := run(t, Config{RespectRetryAfter: true, Timeout: 5 * time.Second}, f, h1)
			if s.Elapsed != 5*time.Second || s.Attempts != 1 || !s.TimedOut {
				t.Errorf("summary = %+v, want given up at the 5s ceiling after 1 attempt", s)
			}
		})
	})
}

func TestWaitAborted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: sequence(status503, status503, hang)})
		m := &recorder{}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(ms(1200), cancel)
		s := Run(ctx, Config{Endpoints: []Endpoint{target(t, h1)}, Probe: f.probe, Metrics: m})
		if !s.Aborted || s.TimedOut || s.Healthy || s.Elapsed != ms(1200) || s.Attempts != 2 {
			t.Errorf("summary = %+v, want aborted at 1.2s after 2 completed attempts", s)
		}
		if want := []string{MetricStarted, MetricAborted}; !slices.Equal(m.names, want) {
			t.Errorf("metrics %v, want %v", m.names, want)
		}
	})
}

func TestWaitMetricSelection(t *testing.T) {
	tests := []struct {
		s    Summary
		want string
	}{
		{Summary{Healthy: true}, MetricHealthy},
		{Summary{TimedOut: true, FailOpen: true}, MetricFailOpen},
		{Summary{TimedOut: true}, MetricError},
		{Summary{Aborted: true}, MetricAborted},
		{Summary{Aborted: true, FailOpen: true}, MetricAborted},
	}
	for _, tt := range tests {
		if got := tt.s.Metric(); got != tt.want {
			t.Errorf("%+v: Metric() = %s, want %s", tt.s, got, tt.want)
		}
	}
}

func TestWaitHealthyCountsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: switchAt(ms(600), status503, pass)})
		m := &recorder{}
		run(t, Config{Metrics: m}, f, h1)
		if want := []string{MetricStarted, MetricHealthy}; !slices.Equal(m.names, want) {
			t.Errorf("metrics %v, want %v (per wait, not per attempt)", m.names, want)
		}
	})
}

func TestWaitEventsMarkChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: func(_ int, at time.Duration) answer {
			switch {
			case at < ms(200):
				return refused
			case at < ms(1500):
				return status503
			}
			return pass
		}})
		var changed []string
		var all int
		run(t, Config{Observer: func(e Event) {
			all++
			if e.Changed {
				changed = append(changed, string(e.Result.Reason))
			}
		}}, f, h1)
		if want := []string{"conn_refused", "http_status", "ok"}; !slices.Equal(changed, want) {
			t.Errorf("changes %v, want %v (out of %d events)", changed, want, all)
		}
	})
}

func TestWaitHostPort(t *testing.T) {
	for raw, want := range map[string]string{
		"http://App.Example:8080/x": "app.example:8080",
		"https://example.com/":      "example.com:443",
		"http://example.com":        "example.com:80",
		"http://[::1]:9/":           "[::1]:9",
	} {
		u, _ := url.Parse(raw)
		if got := HostPort(&scheme.Options{URL: u}); got != want {
			t.Errorf("HostPort(%s) = %s, want %s", raw, got, want)
		}
	}
}

// TestWaitUntilDown: the goal inverted (wait4x's --invert-check). A URL
// that passes is probed once per interval until it answers anything else
// --successes times in a row; a refused connection is the goal, so it is
// not re-probed fast; one that still passes at the ceiling is timed out.
func TestWaitUntilDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: switchAt(ms(1200), pass, refused)})
		s := run(t, Config{UntilDown: true, Successes: 2}, f, h1)
		want := []time.Duration{0, ms(500), ms(1000), ms(1500), ms(2000)}
		if got := f.startsOf(h1); !slices.Equal(got, want) {
			t.Errorf("starts = %v, want %v (one per interval, also once refused)", got, want)
		}
		if !s.Healthy || !s.UntilDown || s.TimedOut || s.Endpoints[0].Streak != 2 {
			t.Errorf("summary = %+v, want done after two refused in a row", s)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: always(pass)})
		s := run(t, Config{UntilDown: true, Timeout: ms(1100)}, f, h1)
		_, outcome, _, completed, ok := s.Culprit()
		if s.Healthy || !s.TimedOut || !ok || completed || outcome != classify.Timeout || s.Attempts != 3 {
			t.Errorf("summary = %+v, culprit %v %v; want timed out after 3 passes, counted as timeout", s, outcome, completed)
		}
	})
}

// TestWaitUntilDownNeedsSeenUp: --until-down counts failures only after
// the target was seen up. A URL that never answered (a typo, a service
// already gone) is not down: the wait gives up at the ceiling with its own
// outcome; AllowNeverUp counts failures from the first probe.
func TestWaitUntilDownNeedsSeenUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: always(refused)})
		s := run(t, Config{UntilDown: true, Timeout: ms(1100)}, f, h1)
		i, outcome, reason, completed, ok := s.Culprit()
		if s.Healthy || !s.TimedOut || !ok || i != 0 || !completed || outcome != classify.Refused || reason != classify.ConnRefused || !s.Endpoints[0].NeverUp {
			t.Errorf("summary = %+v, culprit %v %v %v; want given up with its own refused, never up", s, outcome, reason, completed)
		}
		if s.Endpoints[0].Streak != 0 {
			t.Errorf("streak %d: a failure before the first pass counted toward down", s.Endpoints[0].Streak)
		}
		if s.Attempts < 10 {
			t.Errorf("%d attempts in 1.1s: a refused URL not yet seen up is re-probed fast, as a wait for healthy is", s.Attempts)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]func(int, time.Duration) answer{h1: always(refused)})
		s := run(t, Config{UntilDown: true, AllowNeverUp: true, Timeout: ms(1100)}, f, h1)
		if !s.Healthy || s.Endpoints[0].NeverUp || s.Attempts != 1 {
			t.Errorf("summary = %+v; want down at the first refusal with AllowNeverUp", s)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// Refused, then up, then down: only the refusals after the pass count.
		f := newFake(map[string]func(int, time.Duration) answer{h1: func(n int, d time.Duration) answer {
			switch {
			case d < ms(300):
				return refused
			case d < ms(1200):
				return pass
			}
			return refused
		}})
		s := run(t, Config{UntilDown: true, Successes: 2, Timeout: ms(5000)}, f, h1)
		if !s.Healthy || s.Endpoints[0].NeverUp || s.Endpoints[0].Streak != 2 {
			t.Errorf("summary = %+v; want down after the pass and two refusals", s)
		}
	})
}
