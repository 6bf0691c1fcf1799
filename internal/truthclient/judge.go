package truthclient

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The invariants, by the names drain-test gives them (the public names of
// its verdicts); the truth judges them with rules of its own.
const (
	ReadinessNeverFlips = "READINESS_NEVER_FLIPS"
	ReadyFlipLate       = "READY_FLIP_LATE"
	ReadinessFlaps      = "READINESS_FLAPS"
	LivenessFailed      = "LIVENESS_FAILED_DURING_DRAIN"
	ListenerClosedEarly = "LISTENER_CLOSED_EARLY"
	NewRequestsRefused  = "NEW_REQUESTS_REFUSED"
	InflightAborted     = "INFLIGHT_ABORTED"
	ShutdownHang        = "SHUTDOWN_HANG"
	NonzeroExit         = "NONZERO_EXIT"
	KeepaliveReset      = "KEEPALIVE_RESET"
	SignalNotForwarded  = "SIGNAL_NOT_FORWARDED"
	WrapperExitedEarly  = "WRAPPER_EXITED_EARLY"
)

// Margin is how close to an edge of a window (the signal, P, S,
// --ready-flip-max) a request may be made and leave the invariant it
// decides open: the truth's clock and drain-test's start a moment apart,
// and the two clients do not sample the same instants.
const Margin = 40 * time.Millisecond

// InflightEdge is how young an in-flight request may be at the signal and
// its failure before any answer leave INFLIGHT_ABORTED open: it may not
// have been read yet.
const InflightEdge = 200 * time.Millisecond

// Params are the run's windows and how the process ended.
type Params struct {
	// T0 is when the signal was sent.
	T0 time.Time
	// P, S and FlipMax are drain-test's --pre-drain, --shutdown-timeout
	// and --ready-flip-max; PollInterval the client's readiness polls'.
	P, S, FlipMax, PollInterval time.Duration
	// Gone says the process was seen gone, at GoneAt.
	Gone   bool
	GoneAt time.Time
	// Killed says it was killed past S (then the exit status is not judged).
	Killed bool
	// LeftRunning are processes of its group that still ran after it was
	// gone (seen by the caller in /proc).
	LeftRunning []int
	// ExitKnown says ExitCode/ExitSignal were read; Sent is the signal's
	// number.
	ExitKnown  bool
	ExitCode   int
	ExitSignal int
	Sent       int
}

// Truth is what the client saw, invariant by invariant.
type Truth struct {
	// Violated names each invariant a client saw broken, with what it saw.
	Violated map[string]string
	// Open are invariants the log cannot decide (seen only within Margin
	// of a window's edge, or not exercised): drain-test may say either.
	Open map[string]string
	// Seen are the ok facts ("52 of 52 traffic requests made in [0, 1000 ms) served").
	Seen []string
}

// OK says no invariant was violated.
func (t Truth) OK() bool { return len(t.Violated) == 0 }

func rel(t, t0 time.Time) time.Duration { return t.Sub(t0) }

func msOf(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// answeredLater says a fresh request made after r and before P got an
// answer: the service was still accepting and serving then, so r, which
// got none, was held by it (and cut), not parked in the accept queue of a
// listener that had stopped accepting.
func answeredLater(recs []Record, r Record, p Params) bool {
	for _, q := range recs {
		if q.Kind != KindInflight && q.Kind != KindKeepAlive && q.Made.After(r.Made) && rel(q.Made, p.T0) < p.P && q.Outcome.Answered() {
			return true
		}
	}
	return false
}

// Judge judges the log.
func Judge(recs []Record, p Params) Truth {
	t := Truth{Violated: map[string]string{}, Open: map[string]string{}}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Made.Before(recs[j].Made) })
	// Before P the edge is as wide as the service's own slowest health
	// answer inside P (a quarter of P at most): a request made within the
	// service's answer time of a close at P could not have been answered
	// before it, on a loaded machine too. Measured here, by this client.
	pMargin := Margin
	for _, r := range recs {
		if at := rel(r.Made, p.T0); (r.Kind == KindReady || r.Kind == KindLive) && at >= 0 && at < p.P && r.Outcome.Answered() {
			pMargin = max(pMargin, r.Ended.Sub(r.Made))
		}
	}
	pMargin = min(pMargin, max(Margin, p.P/4))
	violate := func(name, nearEdge string, at time.Duration, edge time.Duration, detail string) {
		if _, done := t.Violated[name]; done {
			return
		}
		before := Margin
		if nearEdge == "P" {
			before = pMargin
		}
		if nearEdge != "" && at >= edge-before && at < edge+Margin {
			if _, ok := t.Open[name]; !ok {
				t.Open[name] = detail + " (within " + msOf(before) + " of " + nearEdge + ")"
			}
			return
		}
		t.Violated[name] = detail
		delete(t.Open, name)
	}
	alive := func(r Record) bool { return !p.Gone || r.Made.Before(p.GoneAt) }

	// New connections and new requests made in [0, P).
	served, traffic, sent := 0, 0, 0
	for _, r := range recs {
		at := rel(r.Made, p.T0)
		if r.Kind == KindInflight || r.Kind == KindKeepAlive || at < 0 || at >= p.P+Margin {
			continue // not a new connection
		}
		if r.Kind == KindTraffic && at < p.P {
			sent++
		}
		if at < p.P && rel(r.Ended, p.T0) >= p.P-Margin && (r.Outcome == Cut || (r.Outcome == Reset || r.Outcome == EOF) && answeredLater(recs, r, p)) {
			// Accepted inside P (a reset or a close comes after the
			// connection, a cut after the answer began) and cut once P
			// was over: the listener was open when it was made; the
			// service cut a request in flight when the pre-drain ended.
			if r.Kind == KindTraffic {
				violate(InflightAborted, "P", at, p.P, fmt.Sprintf("a traffic request made at %s (accepted inside P) got %s at %s (%s)", msOf(at), r.Outcome, msOf(rel(r.Ended, p.T0)), r.Err))
			}
			continue
		}
		if !r.Outcome.Answered() {
			violate(ListenerClosedEarly, "P", at, p.P, fmt.Sprintf("a %s request made at %s got %s (%s)", r.Kind, msOf(at), r.Outcome, r.Err))
			continue
		}
		if r.Kind != KindTraffic || at >= p.P {
			continue
		}
		traffic++
		if r.Outcome == Served {
			served++
			continue
		}
		what := fmt.Sprintf("HTTP %d", r.Status)
		if r.Outcome == Cut {
			what = fmt.Sprintf("HTTP %d, %s", r.Status, r.Err)
		}
		violate(NewRequestsRefused, "P", at, p.P, fmt.Sprintf("a traffic request made at %s got %s", msOf(at), what))
	}
	if traffic > 0 {
		t.Seen = append(t.Seen, fmt.Sprintf("%d of %d traffic requests made in [0, %s) served", served, traffic, msOf(p.P)))
	} else if _, bad := t.Violated[NewRequestsRefused]; !bad && sent > 0 {
		// No traffic request got an answer (the listener was gone before
		// the first): whether one answered would have
		// been served is not seen, and drain-test's client, sending at
		// other instants, may have met an answer cut short.
		t.Open[NewRequestsRefused] = fmt.Sprintf("no traffic request made in [0, %s) got an answer", msOf(p.P))
	}

	// Readiness: a status >= 400 within FlipMax, and never 200-399 again.
	var ready []Record
	for _, r := range recs {
		if r.Kind == KindReady && rel(r.Made, p.T0) >= 0 && r.Outcome.Answered() {
			ready = append(ready, r)
		}
	}
	flip := -1
	for i, r := range ready {
		if r.Status >= 400 {
			flip = i
			break
		}
	}
	if flip < 0 {
		t.Violated[ReadinessNeverFlips] = "no readiness poll made after the signal answered a status >= 400"
		for _, r := range recs {
			if at := rel(r.Made, p.T0); r.Kind == KindReady && at >= 0 && !r.Outcome.Answered() {
				if at < p.PollInterval+Margin {
					// Closed before this client's next poll: a flip that
					// short falls between its polls.
					delete(t.Violated, ReadinessNeverFlips)
					t.Open[ReadinessNeverFlips] = fmt.Sprintf("readiness got no answer from %s on, before a poll could see a flip", msOf(at))
				}
				break
			}
		}
	} else {
		at := rel(ready[flip].Made, p.T0)
		last := at
		for _, r := range ready[flip:] {
			if r.Status >= 400 {
				last = rel(r.Made, p.T0)
			}
		}
		if last-at < 100*time.Millisecond {
			// A flip shorter than a few of drain-test's polls may fall
			// between them.
			t.Open[ReadinessNeverFlips] = fmt.Sprintf("readiness answered >= 400 only from %s to %s", msOf(at), msOf(last))
		}
		if at > p.FlipMax {
			violate(ReadyFlipLate, "--ready-flip-max", at, p.FlipMax, fmt.Sprintf("readiness first answered %d at %s", ready[flip].Status, msOf(at)))
		} else {
			t.Seen = append(t.Seen, fmt.Sprintf("readiness flipped at %s", msOf(at)))
		}
		for _, r := range ready[flip+1:] {
			if r.Status < 400 && alive(r) {
				t.Violated[ReadinessFlaps] = fmt.Sprintf("readiness answered %d again at %s", r.Status, msOf(rel(r.Made, p.T0)))
				break
			}
		}
	}

	// Liveness: 200-399 on every poll made in [0, P) that got an answer.
	livePolls, liveAnswers := 0, 0
	for _, r := range recs {
		at := rel(r.Made, p.T0)
		if r.Kind == KindLive && at >= 0 && at < p.P {
			livePolls++
		}
		if r.Kind == KindLive && at >= 0 && at < p.P+Margin && r.Outcome.Answered() && alive(r) {
			liveAnswers++
			if r.Status >= 400 {
				violate(LivenessFailed, "P", at, p.P, fmt.Sprintf("liveness answered %d at %s", r.Status, msOf(at)))
			}
		}
	}
	if _, bad := t.Violated[LivenessFailed]; !bad && livePolls > 0 && liveAnswers == 0 {
		// As for traffic: no poll got an answer (the listener was gone),
		// and drain-test's, at other instants, may have met the 503 a
		// closing server answers (fastify's close()).
		t.Open[LivenessFailed] = fmt.Sprintf("no liveness poll made in [0, %s) got an answer", msOf(p.P))
	}

	// In flight at the signal: every one completes 2xx with its body. A
	// request made just before the signal may not have reached the server.
	// A body without a length ends when the server closes the connection
	// (RFC 9112 §6.3): complete, unless shorter than the same path's
	// answer read whole before the signal (the slow requests restarted
	// until then).
	baseline := int64(-1)
	for _, r := range recs {
		if r.Kind == KindInflight && r.Outcome == Served && r.Ended.Before(p.T0) {
			baseline = max(baseline, r.Bytes)
		}
	}
	inflight := 0
	for _, r := range recs {
		if r.Kind != KindInflight || !r.Made.Before(p.T0) || r.Ended.Before(p.T0) {
			continue // not in flight at the signal
		}
		at := rel(r.Made, p.T0)
		inflight++
		bad := r.Outcome != Served
		why := fmt.Sprintf("%s (%s)", r.Outcome, r.Err)
		if r.Outcome == BadStatus {
			why = fmt.Sprintf("HTTP %d", r.Status)
		}
		if !bad && r.Delimited && p.Gone && r.Ended.After(p.GoneAt.Add(-100*time.Millisecond)) && r.Bytes < baseline {
			bad, why = true, fmt.Sprintf("a body without a length ended with the process, %d bytes of the %d answered before the signal", r.Bytes, baseline)
		}
		if bad && !r.Outcome.Answered() && at > -InflightEdge && r.Ended.Before(p.T0.Add(InflightEdge)) {
			// Refused or reset before any answer, made and ended close to
			// the signal: the server may never have read it (a server
			// that closes its idle connections drops it), which says
			// nothing about its drain.
			if t.Open[InflightAborted] == "" {
				t.Open[InflightAborted] = fmt.Sprintf("an in-flight request made at %s got %s before any answer at %s: maybe never read", msOf(at), r.Outcome, msOf(rel(r.Ended, p.T0)))
			}
			continue
		}
		if bad {
			violate(InflightAborted, "", at, 0, fmt.Sprintf("an in-flight request made at %s got %s at %s", msOf(at), why, msOf(rel(r.Ended, p.T0))))
		}
	}
	if inflight == 0 && p.Sent != 0 {
		t.Open[InflightAborted] = "no request of the truth client was in flight at the signal"
	} else if _, bad := t.Violated[InflightAborted]; !bad && t.Open[InflightAborted] == "" {
		t.Seen = append(t.Seen, fmt.Sprintf("%d of %d in-flight requests completed", inflight, inflight))
	}

	// The kept-alive connection: no response cut once it began, no reset
	// while idle (a clean close is fine).
	for _, r := range recs {
		if r.Kind == KindKeepAlive && !r.Made.Before(p.T0) && (r.Outcome == Cut || r.Outcome == Reset) {
			t.Violated[KeepaliveReset] = fmt.Sprintf("the kept-alive connection at %s: %s", msOf(rel(r.Made, p.T0)), r.Err)
			break
		}
	}

	// The exit: by S, 0 or 128+N after signal N.
	switch {
	case p.Killed || !p.Gone:
		t.Violated[ShutdownHang] = "the process was still running past S"
	default:
		at := rel(p.GoneAt, p.T0)
		if at > p.S {
			violate(ShutdownHang, "S", at, p.S, fmt.Sprintf("gone at %s > S %s", msOf(at), msOf(p.S)))
		} else if at > p.S-Margin {
			t.Open[ShutdownHang] = fmt.Sprintf("gone at %s, within %s of S", msOf(at), msOf(Margin))
		}
		switch {
		case !p.ExitKnown:
			t.Open[NonzeroExit] = "exit status not read"
		case p.ExitSignal != 0:
			t.Violated[NonzeroExit] = fmt.Sprintf("killed by signal %d", p.ExitSignal)
		case p.ExitCode != 0 && p.ExitCode != 128+p.Sent:
			t.Violated[NonzeroExit] = fmt.Sprintf("exit status %d", p.ExitCode)
		}
	}

	// Something reacted, and it was the service: nothing answers after the
	// signalled process is gone.
	reacted := flip >= 0 || (p.Gone && !p.Killed)
	for name := range t.Violated {
		if name != ShutdownHang {
			reacted = true
		}
	}
	if !reacted {
		t.Violated[SignalNotForwarded] = "nothing a client sees changed after the signal"
	}
	if p.Gone && !p.Killed && len(p.LeftRunning) > 0 {
		t.Violated[SignalNotForwarded] = fmt.Sprintf("processes of its group (pids %v) still ran after it was gone", p.LeftRunning)
	}
	if p.Gone && !p.Killed {
		for _, r := range recs {
			if r.Kind != KindInflight && r.Made.After(p.GoneAt.Add(Margin)) && r.Outcome.Answered() {
				name := SignalNotForwarded
				if flip >= 0 {
					// The service got the signal (readiness flipped) and
					// outlived the process signalled: an init or shell
					// that exited first.
					name = WrapperExitedEarly
					if len(p.LeftRunning) > 0 && t.Violated[SignalNotForwarded] != "" {
						delete(t.Violated, SignalNotForwarded)
					}
				}
				t.Violated[name] = fmt.Sprintf("a %s request made at %s, after the process was gone (%s), got HTTP %d", r.Kind, msOf(rel(r.Made, p.T0)), msOf(rel(p.GoneAt, p.T0)), r.Status)
				break
			}
		}
	}
	return t
}

// Unmeasured are drain-test verdicts the truth client has no evidence
// for: a FAIL of one of them is reported, never taken as agreement.
var Unmeasured = map[string]bool{"EXIT_CODE_UNKNOWN": true, "NOT_READY_BEFORE": true}

// Agree compares drain-test's failed verdicts with the truth: every
// invariant the truth decided must be failed exactly when it was violated.
// It returns the disagreements, one line each.
func Agree(t Truth, failed []string) []string {
	f := map[string]bool{}
	for _, n := range failed {
		f[n] = true
	}
	var out []string
	for n := range f {
		if _, v := t.Violated[n]; v {
			continue
		}
		if _, open := t.Open[n]; open {
			continue
		}
		if Unmeasured[n] {
			out = append(out, fmt.Sprintf("drain-test FAILs %s, which the truth client does not measure", n))
			continue
		}
		out = append(out, fmt.Sprintf("drain-test FAILs %s, but no client saw it broken", n))
	}
	for n, why := range t.Violated {
		if !f[n] {
			out = append(out, fmt.Sprintf("drain-test does not FAIL %s, but the truth client saw: %s", n, why))
		}
	}
	sort.Strings(out)
	return out
}

// String is the truth as lines: "violated NAME: detail", "open NAME: why",
// "seen: fact".
func (t Truth) String() string {
	var b strings.Builder
	var names []string
	for n := range t.Violated {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "violated %s: %s\n", n, t.Violated[n])
	}
	names = names[:0]
	for n := range t.Open {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "open %s: %s\n", n, t.Open[n])
	}
	for _, s := range t.Seen {
		fmt.Fprintf(&b, "seen: %s\n", s)
	}
	if t.OK() {
		b.WriteString("truth: PASS\n")
	} else {
		b.WriteString("truth: FAIL\n")
	}
	return b.String()
}

// Log renders the records relative to t0, one a line.
func Log(recs []Record, t0 time.Time) string {
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%-9s made %7.1f ended %7.1f %-9s %3d %d bytes %s\n", r.Kind,
			float64(r.Made.Sub(t0).Microseconds())/1000, float64(r.Ended.Sub(t0).Microseconds())/1000, r.Outcome, r.Status, r.Bytes, r.Err)
	}
	return b.String()
}
