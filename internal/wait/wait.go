// Package wait polls health endpoints until they pass (healthctl
// wait-healthy): the first probe at once, then one probe per
// interval, start to start, while a server answers anything; fast re-probes
// only while nothing listens; a ceiling after which it gives up (or fails
// open). It never prints: progress goes to an Observer, the outcome is the
// returned Summary, and the per-wait counters go to a Metrics sink.
//
// Probes come from a Prober, so the loop is tested inside a testing/synctest
// bubble (whose fake time the time package then reports) with an in-memory
// prober.
package wait

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// Defaults of the loop: a 500 ms poll and a 30 s ceiling, a CI gate's numbers.
const (
	DefaultInterval  = 500 * time.Millisecond
	DefaultTimeout   = 30 * time.Second
	DefaultSuccesses = 1
)

// RefusedRetry is the delay, start to start, between re-probes of a URL that
// refused the connection, and the spacing of such re-probes per dialled
// address (ip:port): at most 20 a second on one port, however many URLs (and
// host names) lead to it. A refused
// connection costs the server nothing, and it is the moment a booting server
// starts listening that a gate wants to catch.
const RefusedRetry = 50 * time.Millisecond

// The counters of one wait: Started once, then exactly one of
// the others. With them, the alarm
// rate(fail_open) / rate(started) > 0.1 means what it says.
const (
	MetricStarted  = "probe.started"
	MetricHealthy  = "probe.healthy"
	MetricFailOpen = "probe.fail_open"
	MetricError    = "probe.error"
	MetricAborted  = "probe.aborted"
)

// ErrCeiling is the cause of the context a probe gets once the ceiling
// (--timeout) has passed.
var ErrCeiling = errors.New("wait-healthy ceiling reached")

// Metrics receives the per-wait counters (a StatsD client, or nothing).
type Metrics interface {
	Count(name string)
}

// Endpoint is one URL to wait for (the URL argument, validated).
type Endpoint struct {
	Options *scheme.Options
	// URL is the redacted URL, for messages.
	URL string
}

// Config is one wait.
type Config struct {
	Endpoints []Endpoint
	Interval  time.Duration
	Timeout   time.Duration
	Successes int
	// FailOpen only changes what the wait is counted as when the ceiling
	// comes (fail_open instead of error); deciding the exit is the caller's.
	FailOpen bool
	// RespectRetryAfter makes a Retry-After answer the next delay (never
	// shorter than the interval, never past the ceiling).
	RespectRetryAfter bool
	// UntilDown inverts the goal (wait4x's --invert-check): a target is
	// done once it answered anything but a pass Successes times in a row.
	// A refused connection is then the goal, not a reason to re-probe
	// fast: every probe is one interval apart.
	UntilDown bool
	// AllowNeverUp (with UntilDown) counts failing answers toward down
	// before the target was ever seen up. Without it a target must pass
	// once first: a URL that never answered (a typo, a service already
	// gone) is not "down", it is a wait that gives up with its own outcome;
	// until its first pass it is re-probed as a wait for healthy is.
	AllowNeverUp bool

	Probe    probe.Prober
	Metrics  Metrics
	Observer func(Event)
}

// Event is one completed probe, reported to the Observer. Events are
// delivered one at a time, in the order they happened.
type Event struct {
	// Index is the target's position in Config.Endpoints.
	Index  int
	URL    string
	Result probe.Result
	// Attempt counts this target's completed probes; Attempts all targets'.
	Attempt  int
	Attempts int
	// Changed is true when the outcome or reason differs from this target's
	// previous probe (always true for the first).
	Changed bool
	// Streak is the passes in a row so far (with Config.UntilDown, the
	// answers that were not a pass); Done says it reached
	// Config.Successes (the target is not probed again).
	Streak int
	Done   bool
	// NeverUp (Config.UntilDown without AllowNeverUp): the target has not
	// passed yet, so its failures do not count toward down.
	NeverUp bool
	// Elapsed is since the wait began; Next is the delay until this target's
	// next probe starts (0 when Done).
	Elapsed time.Duration
	Next    time.Duration
}

// Summary is how a wait ended.
type Summary struct {
	// Healthy: every target reached its successes (with
	// Config.UntilDown: its failures in a row; UntilDown then says so).
	Healthy   bool
	UntilDown bool
	// Aborted: the caller's context ended first (a signal).
	Aborted bool
	// TimedOut: the ceiling came first; FailOpen repeats Config.FailOpen in
	// that case.
	TimedOut  bool
	FailOpen  bool
	Attempts  int
	Elapsed   time.Duration
	Endpoints []EndpointSummary
}

// EndpointSummary is how one endpoint ended.
type EndpointSummary struct {
	URL      string
	Healthy  bool
	Attempts int
	Streak   int
	// Last is the last completed probe (nil when none completed); a probe
	// cut short by the ceiling or a signal never counts.
	Last *probe.Result
	// LastFailure is the last completed probe that did not pass.
	LastFailure *probe.Result
	// NeverUp (Config.UntilDown without AllowNeverUp): no probe of it
	// passed, so none of its failures counted toward down.
	NeverUp bool
}

// Metric is the one counter that ends this wait.
func (s *Summary) Metric() string {
	switch {
	case s.Healthy:
		return MetricHealthy
	case s.Aborted:
		return MetricAborted
	case s.TimedOut && s.FailOpen:
		return MetricFailOpen
	}
	return MetricError
}

// Culprit returns the first target (argument order) that is not healthy and
// the outcome and reason that explain it: its last completed failure, or
// timeout when no failure completed (every probe cut short, or passes too
// few). ok is false when every target is healthy. With UntilDown the
// target still answered a pass: timeout, not completed — unless it was
// never seen up (NeverUp), when its own last failure explains it.
func (s *Summary) Culprit() (index int, outcome classify.Outcome, reason classify.Reason, completed bool, ok bool) {
	for i, t := range s.Endpoints {
		if t.Healthy {
			continue
		}
		if t.LastFailure != nil && (!s.UntilDown || t.NeverUp) {
			return i, t.LastFailure.Outcome, t.LastFailure.Reason, true, true
		}
		return i, classify.Timeout, "", false, true
	}
	return -1, "", "", false, false
}

// Run waits until every target is healthy, the ceiling passes, or ctx ends.
func Run(ctx context.Context, cfg Config) Summary {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Successes < 1 {
		cfg.Successes = DefaultSuccesses
	}
	if cfg.Probe == nil {
		cfg.Probe = probe.Run
	}
	w := &waiter{cfg: cfg, slots: map[string]time.Time{}}
	w.start = time.Now()
	w.deadline = w.start.Add(cfg.Timeout)
	w.targets = make([]EndpointSummary, len(cfg.Endpoints))
	for i, t := range cfg.Endpoints {
		w.targets[i].URL = t.URL
	}
	count(cfg.Metrics, MetricStarted)

	ceil, cancel := context.WithCancelCause(ctx)
	ceiling := time.AfterFunc(cfg.Timeout, func() {
		defer crash.Recover()
		cancel(ErrCeiling)
	})
	var wg sync.WaitGroup
	for i := range cfg.Endpoints {
		wg.Go(func() {
			defer crash.Recover()
			w.loop(ceil, i)
		})
	}
	wg.Wait()
	ceiling.Stop()
	cancel(nil)

	s := Summary{Endpoints: w.targets, Attempts: w.attempts, Elapsed: time.Since(w.start), Healthy: true, UntilDown: cfg.UntilDown}
	for _, t := range s.Endpoints {
		s.Healthy = s.Healthy && t.Healthy
	}
	if !s.Healthy {
		if ctx.Err() != nil {
			s.Aborted = true
		} else {
			s.TimedOut, s.FailOpen = true, cfg.FailOpen
		}
	}
	count(cfg.Metrics, s.Metric())
	return s
}

func count(m Metrics, name string) {
	if m != nil {
		m.Count(name)
	}
}

// waiter is the shared state of one Run; mu guards everything below it.
type waiter struct {
	cfg      Config
	start    time.Time
	deadline time.Time

	mu       sync.Mutex
	attempts int
	targets  []EndpointSummary
	// slots is, per dialled address (ip:port), the earliest start of the
	// next refused re-probe.
	slots map[string]time.Time
}

// loop probes one target until it is done or ctx ends.
func (w *waiter) loop(ctx context.Context, i int) {
	t := w.cfg.Endpoints[i]
	// The refused rate limit's unit is the address a probe dialled, so
	// 127.0.0.1:P and localhost:P share one budget. Until a probe has
	// dialled, the URL's host:port stands in for it.
	key := HostPort(t.Options)
	var prev *probe.Result
	streak, attempt := 0, 0
	// seenUp: with UntilDown, a failure counts toward down only after a
	// pass (or with AllowNeverUp).
	seenUp := !w.cfg.UntilDown || w.cfg.AllowNeverUp
	for {
		started := time.Now()
		if !started.Before(w.deadline) {
			return // the ceiling's timer may not have fired yet
		}
		w.noteStart(key, started)
		r := w.cfg.Probe(ctx, t.Options)
		if r.Canceled {
			return // cut short by the ceiling or a signal: not an outcome
		}
		attempt++
		if r.Address != "" {
			key = r.Address
		}
		if r.Outcome == classify.Pass {
			seenUp = true
		}
		if (r.Outcome == classify.Pass) != w.cfg.UntilDown && seenUp {
			streak++
		} else {
			streak = 0
		}
		done := streak >= w.cfg.Successes
		now := time.Now()
		var next time.Time
		if !done {
			// Until it was seen up, an --until-down target is waited for
			// as a healthy one is: refused is re-probed fast.
			next = w.next(key, started, now, r, !w.cfg.UntilDown || !seenUp)
		}
		changed := prev == nil || prev.Outcome != r.Outcome || prev.Reason != r.Reason
		prev = &r

		w.mu.Lock()
		w.attempts++
		ts := &w.targets[i]
		ts.Attempts, ts.Streak, ts.Healthy = attempt, streak, done
		ts.NeverUp = !seenUp
		last := r
		ts.Last = &last
		if r.Outcome != classify.Pass {
			ts.LastFailure = &last
		}
		ev := Event{
			Index: i, URL: t.URL, Result: r, Attempt: attempt, Attempts: w.attempts,
			Changed: changed, Streak: streak, Done: done, Elapsed: now.Sub(w.start),
			NeverUp: !seenUp,
		}
		if !done {
			ev.Next = max(0, next.Sub(now))
		}
		// Delivered under the lock so the observer sees events one at a
		// time and in order.
		if w.cfg.Observer != nil {
			w.cfg.Observer(ev)
		}
		w.mu.Unlock()

		if done || !sleepUntil(ctx, next) {
			return
		}
	}
}

// noteStart records a probe start on key: a refused re-probe of any URL
// dialling the same address starts no sooner than RefusedRetry after it.
func (w *waiter) noteStart(key string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := at.Add(RefusedRetry); s.After(w.slots[key]) {
		w.slots[key] = s
	}
}

// next is when the target's next probe may start; fast lets a refused
// connection be re-probed at once (a wait for up, not for down).
func (w *waiter) next(key string, started, now time.Time, r probe.Result, fast bool) time.Time {
	if r.Outcome == classify.Refused && fast {
		// Nothing listens: re-probe fast, in the next free slot of this
		// address, and reserve it so URLs dialling it share the rate.
		w.mu.Lock()
		defer w.mu.Unlock()
		at := later(started.Add(RefusedRetry), w.slots[key])
		w.slots[key] = at.Add(RefusedRetry)
		return at
	}
	// The server answers (or at least accepts): one request per interval,
	// start to start; a slow probe is followed at once, never overlapped.
	at := started.Add(w.cfg.Interval)
	if r.RetryAfter != nil && (w.cfg.RespectRetryAfter || r.HTTPStatus == 429) {
		// Only ever a longer wait; the ceiling cuts it (sleepUntil). A
		// 429 is the server throttling this client: asking sooner only
		// earns another 429, so its Retry-After is honoured unasked.
		at = later(at, now.Add(*r.RetryAfter))
	}
	return at
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// sleepUntil waits until t; it reports false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

// HostPort is the host:port a URL names (lower-case host, the scheme's
// default port when none is given): the refused rate limit's unit until a
// probe has reported the address it dialled.
func HostPort(o *scheme.Options) string {
	if o == nil || o.URL == nil {
		return ""
	}
	port := o.URL.Port()
	if port == "" {
		port = scheme.DefaultPort(o.URL.Scheme)
	}
	return net.JoinHostPort(strings.ToLower(o.URL.Hostname()), port)
}
