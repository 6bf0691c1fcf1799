package judge

// The listener's verdict, LISTENER_CLOSED_EARLY: a connection refused,
// reset or left unanswered inside P, told from one that only lost the race
// with the close at P or was cut after it.

import (
	"fmt"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
)

// closeRace is how close to P a connection attempt may be made and lose
// the race with the close the pre-drain ends with (accepted, then closed
// before its request was read) without failing the listener: a service
// that closes at P, as PRE_DRAIN_MS = P says, meets its contract.
const closeRace = 40 * time.Millisecond

// raceWindow is how close to P an attempt may be made and still only have
// lost the race with the close at P: closeRace, or longer when the
// service's own health answers inside P took longer (a loaded machine: a
// request made within the service's own answer time of P could not have
// been answered before a close at P, however correct the service).
// Capped at a quarter of P, so a slow service cannot excuse its pre-drain.
func raceWindow(o evidence.Observation, P time.Duration) time.Duration {
	w := closeRace
	for _, p := range o.Polls {
		if p.At >= 0 && p.At < P && p.Answered() && (p.Probe == evidence.Ready || p.Probe == evidence.Live) && p.Took > w {
			w = p.Took
		}
	}
	return min(w, P/4)
}

// judgeListener: every connection attempt made during [0, P) to the health
// port or the traffic endpoint is accepted and answered. A refused, reset
// or unanswered attempt fails it at the time it was made (a stall late in
// P is charged when it began, not when its poll gave up). closed is when
// the first such attempt after the signal was made.
func judgeListener(o evidence.Observation, P time.Duration) (v Verdict, closed time.Duration) {
	closed = notSeen
	var early *evidence.Poll
	n, failed, raced, cutLater := 0, 0, 0, 0
	race := raceWindow(o, P)
	for i, p := range o.Polls {
		if p.At < 0 {
			continue
		}
		unanswered := !p.Answered() && !(o.Exit.Killed && p.End() >= o.Exit.KilledAt)
		if unanswered && p.Probe == evidence.Live && !p.Refused && portAnswered(o, p) {
			unanswered = false // liveness's own hang: LIVENESS_FAILED_DURING_DRAIN
		}
		if unanswered && cutAfterPreDrain(o, p, P) {
			// Accepted inside P and cut once P was over: the listener was
			// open when it was made; the cut is INFLIGHT_ABORTED's.
			n++
			cutLater++
			continue
		}
		if unanswered && (closed < 0 || p.At < closed) {
			closed = p.At
		}
		if p.At >= P {
			continue
		}
		n++
		if unanswered && p.At >= P-race {
			raced++
		}
		if unanswered && p.At < P-race {
			failed++
			if early == nil || p.At < early.At {
				early = &o.Polls[i]
			}
		}
	}
	if early != nil {
		return verdict(ListenerClosedEarly, false, fmt.Sprintf("a new connection (%s) made at %s got %s, inside the pre-drain window (P = %s); %d of %d connection attempts made in [0, %s) failed: routed requests would fail%s", early.Probe, ms(early.At), evidence.Describe(*early), ms(P), failed, n, ms(P), queuedAtClose(o, *early, P))), closed
	}
	detail := fmt.Sprintf("%d of %d connection attempts made in [0, %s) were accepted and answered", n-raced-cutLater, n, ms(P))
	if cutLater > 0 {
		detail += fmt.Sprintf("; %d more were accepted and cut after P (%s)", cutLater, InflightAborted)
	}
	if raced > 0 {
		detail += fmt.Sprintf("; the other %d, made in its last %s, lost the race with the close at P", raced, ms(race))
	}
	return verdict(ListenerClosedEarly, true, detail), closed
}

// queuedAtClose is the listener row's note when what failed it is what a
// service too slow for its load (or starved of CPU) shows: the attempt's
// connection was accepted (not refused) and ended only after P, and the
// service's own health answers in P took longer than the close race can
// excuse (a quarter of P). The listener was open then; the service had
// not taken the connection from its accept queue when it closed.
func queuedAtClose(o evidence.Observation, p evidence.Poll, P time.Duration) string {
	if p.Refused || p.End() < P {
		return ""
	}
	var slow time.Duration
	for _, q := range o.Polls {
		if q.At >= 0 && q.At < P && q.Answered() && (q.Probe == evidence.Ready || q.Probe == evidence.Live) && q.Took > slow {
			slow = q.Took
		}
	}
	if slow <= P/4 {
		return ""
	}
	return fmt.Sprintf(" (that connection was accepted and ended at %s, after P, and the service's own health answers in P took up to %s: the listener was open, but the service, behind on its load or starved of CPU, had not yet taken the connections queued when it closed)", ms(p.End()), ms(slow))
}

// cutAfterPreDrain says p was made inside the pre-drain window, its
// connection accepted (not refused, no connect timeout), and was cut — a
// reset or a close, before or during its answer — once P was over (or in
// the close race just before it): a request in flight when the pre-drain
// ended, which the listener being open through P explains, and whose cut
// is INFLIGHT_ABORTED's. A request cut by healthctl's kill is not.
func cutAfterPreDrain(o evidence.Observation, p evidence.Poll, P time.Duration) bool {
	if p.At < 0 || p.At >= P || p.Refused || p.End() < P-closeRace {
		return false
	}
	if o.Exit.Killed && p.End() >= o.Exit.KilledAt {
		return false
	}
	if p.Answered() {
		return p.Cut
	}
	switch transportResult(p.Err) {
	case ResultReset, ResultEOF:
		// No answer at all: held by a handler, or parked in the accept
		// queue of a listener that stopped accepting? The port tells:
		// a fresh request to it made later inside P was answered.
		return answeredLaterInP(o, p, P)
	}
	return false
}

// answeredLaterInP says a request to p's host:port made after p and
// before P got an answer: the port was still accepting and serving then.
func answeredLaterInP(o evidence.Observation, p evidence.Poll, P time.Duration) bool {
	h := o.HostPorts[p.Probe]
	if h == "" {
		return false
	}
	for _, q := range o.Polls {
		if q.At > p.At && q.At < P && q.Answered() && o.HostPorts[q.Probe] == h {
			return true
		}
	}
	return false
}
