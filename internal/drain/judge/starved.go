package judge

// A starved run: what drain-test's own lateness could have made fail is
// not named (the outcome is unknown, exit 9).

import (
	"fmt"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
)

// StarvedBound is how late drain-test may run and still name the
// invariants a service broke: a quarter of a poll's 1 s window. A run
// later than that could see a poll time out, a flip come late or the
// listener look closed because drain-test itself was not scheduled, and
// calls a run that failed unknown (exit 9) instead of naming invariants.
const StarvedBound = evidence.PollTimeout / 4

// Starved says a run that failed was measured while drain-test itself was
// starved: its failures are not named.
type Starved struct {
	LatenessMS float64 `json:"lateness_ms"`
	AtMS       float64 `json:"at_ms"`
	What       string  `json:"what"`
	BoundMS    float64 `json:"bound_ms"`
	// Seen are the invariants it would have named.
	Seen []string `json:"seen"`
}

// Unknown says the run's outcome is unknown: it failed only on what
// drain-test's own lateness could have made (exit 9).
func (r Report) Unknown() bool {
	if r.Starved == nil {
		return false
	}
	for _, v := range r.Verdicts {
		if !v.OK {
			return false
		}
	}
	return true
}

// byTimingAlone says a failed verdict rests only on what a starved
// prober can fake: a request that got no answer within its window, or a
// moment (the flip, the exit) seen within late of its bound. A refusal, a
// reset, a close, a status, an exit status are the server's doing.
func byTimingAlone(o evidence.Observation, s evidence.Settings, name string, flip, late time.Duration) bool {
	timedOut := func(p evidence.Poll) bool {
		return !p.Answered() && !p.Refused && transportResult(p.Err) == ResultNoAnswer
	}
	P := s.PreDrain
	switch name {
	case ListenerClosedEarly:
		race := raceWindow(o, P)
		for _, p := range o.Polls {
			if p.At >= 0 && p.At < P-race && !p.Answered() && !timedOut(p) && !cutAfterPreDrain(o, p, P) && !(o.Exit.Killed && p.End() >= o.Exit.KilledAt) {
				return false // refused, reset or closed: the server's
			}
		}
		return true
	case LivenessFailedDuringDrain:
		for _, p := range o.Polls {
			if p.Probe == evidence.Live && p.At >= 0 && p.At < P && p.Answered() && !evidence.OKStatus(p.Status) {
				return false // a status: the server's
			}
		}
		return true
	case ReadinessNeverFlips:
		for _, p := range o.Polls {
			if p.Probe == evidence.Ready && p.At >= 0 && timedOut(p) {
				return true
			}
		}
		return false
	case ReadyFlipLate:
		return flip >= 0 && flip-late <= s.ReadyFlipMax
	case InflightAborted:
		for _, q := range o.Inflight {
			if !q.OK() && !strings.Contains(q.Err, "timeout") || shortDelimited(q, o) {
				return false
			}
		}
		for _, p := range o.Polls {
			if p.Probe == evidence.Traffic && cutAfterPreDrain(o, p, P) {
				return false
			}
		}
		return true
	case ShutdownHang:
		at := o.Exit.At
		if o.Exit.Killed {
			at = o.Exit.KilledAt
		}
		return o.Exit.Gone && at-late <= s.ShutdownTimeout
	}
	return false
}

// Why is the sentence the report's first line and each row give.
func (s Starved) Why() string {
	return fmt.Sprintf("drain-test itself was starved: %s ran %.0f ms late at %.0f ms (more than the %.0f ms a verdict allows: a loaded machine)", s.What, s.LatenessMS, s.AtMS, s.BoundMS)
}
