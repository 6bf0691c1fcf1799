package judge

// The timeline of a run and the formulas of a fix.

import (
	"fmt"
	"sort"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/shutdown"
)

// timeline orders what happened after the signal.
func timeline(o evidence.Observation, P time.Duration) []Event {
	if !o.ReadyBefore {
		return nil
	}
	ev := []Event{{0, "signal", fmt.Sprintf("%s sent to pid %d", o.Signal, o.Pid)}}
	served := evidence.OKStatus
	if o.TrafficOK != nil {
		served = o.TrafficOK
	}
	ev = append(ev, pollEvents(o, P, served)...)
	last, done := notSeen, 0
	for i, q := range o.Inflight {
		if !q.OK() {
			ev = append(ev, Event{tms(q.End), "inflight_aborted", fmt.Sprintf("in-flight request #%d: %s", i+1, evidence.DescribeRequest(q))})
			continue
		}
		if shortDelimited(q, o) {
			ev = append(ev, Event{tms(q.End), "inflight_aborted", fmt.Sprintf("in-flight request #%d: %s", i+1, shortDelimitedWhy(q, o))})
			continue
		}
		done++
		last = max(last, q.End)
	}
	if last >= 0 {
		ev = append(ev, Event{tms(last), "inflight_done", fmt.Sprintf("last of %d completed in-flight requests done", done)})
	}
	for _, e := range o.KeepAlive.Events {
		ev = append(ev, Event{tms(e.At), "keepalive_" + string(e.Kind), e.Detail})
	}
	if o.Exit.Killed {
		ev = append(ev, Event{tms(o.Exit.KilledAt), "killed", "still running past SHUTDOWN_TIMEOUT plus a margin: process group killed by healthctl"})
	} else if o.Exit.Gone {
		ev = append(ev, Event{tms(o.Exit.At), "exit", o.Exit.String()})
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].TMS < ev[j].TMS })
	return ev
}

// tms is a time since the signal in the timeline's unit, milliseconds.
func tms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// pollEvents are the first time each thing was seen in the polls after the
// signal: the flip, a flap back to 200, a liveness failure, the listener
// closing; and the first answer that came after the process exited.
func pollEvents(o evidence.Observation, P time.Duration, served func(int) bool) []Event {
	x := o.Exit
	var ev []Event
	var flipped, flapped, liveFailed, closed, refused bool
	polls := append([]evidence.Poll(nil), o.Polls...)
	sort.SliceStable(polls, func(i, j int) bool { return polls[i].At < polls[j].At })
	for _, p := range polls {
		if p.At < 0 {
			continue
		}
		switch {
		case p.Probe == evidence.Ready && failStatus(p.Status) && !flipped:
			flipped = true
			ev = append(ev, Event{tms(p.At), "ready_flip", fmt.Sprintf("readiness answered %s", p.Said())})
		case p.Probe == evidence.Ready && evidence.OKStatus(p.Status) && flipped && !flapped:
			flapped = true
			ev = append(ev, Event{tms(p.At), "ready_flap", fmt.Sprintf("readiness answered %s again", p.Said())})
		case p.Probe == evidence.Traffic && p.Answered() && (p.Cut || !served(p.Status)) && !refused && !cutAfterPreDrain(o, p, P):
			refused = true
			what := fmt.Sprintf("HTTP %d", p.Status)
			if p.Cut {
				what += " with its body cut"
			}
			ev = append(ev, Event{tms(p.At), "traffic_refused", "a new request made then to the traffic endpoint got " + what})
		case p.Probe == evidence.Live && p.Answered() && !evidence.OKStatus(p.Status) && !liveFailed:
			liveFailed = true
			ev = append(ev, Event{tms(p.At), "live_fail", fmt.Sprintf("liveness answered %s", p.Said())})
		}
		if !p.Answered() && !closed && !(x.Killed && p.End() >= x.KilledAt) && !cutAfterPreDrain(o, p, P) {
			closed = true
			ev = append(ev, Event{tms(p.At), "listener_closed", "a new connection (" + string(p.Probe) + ") made then got " + evidence.Describe(p)})
		}
		if x.Gone && !x.Killed && p.At > x.At && p.Answered() {
			ev = append(ev, Event{tms(p.At), "answered_after_exit", fmt.Sprintf("%s answered %s after the process exited", p.Probe, p.Said())})
			break
		}
	}
	return ev
}

// Formula is one timing rule (PRE_DRAIN_MS < SHUTDOWN_TIMEOUT_MS, preStop
// sleep >= PRE_DRAIN_MS, ...) filled with this run's numbers.
type Formula struct {
	Formula string `json:"formula"`
	// Result is "holds", "fails", or the setting the numbers call for.
	Result string `json:"result"`
	// Holds is false when the rule is broken by the numbers themselves.
	Holds bool `json:"holds"`
}

// Formulas fills the timing rules with P, S and the measured exit: P < S,
// the exit within S, and the preStop, terminationGracePeriodSeconds and
// stop_grace_period a deployment of this service needs (the same rules the
// manifest lint checks, seeds/003).
func Formulas(s evidence.Settings, f Facts) []Formula {
	P, S := s.PreDrain.Milliseconds(), s.ShutdownTimeout.Milliseconds()
	holds := func(ok bool) string {
		if ok {
			return "holds"
		}
		return "fails"
	}
	out := []Formula{{
		Formula: fmt.Sprintf("PRE_DRAIN_MS (%d) < SHUTDOWN_TIMEOUT_MS (%d)", P, S),
		Result:  holds(P < S), Holds: P < S,
	}}
	if f.Exit >= 0 {
		ok := f.Exit <= s.ShutdownTimeout
		out = append(out, Formula{
			Formula: fmt.Sprintf("measured exit (%d ms) <= SHUTDOWN_TIMEOUT_MS (%d)", f.Exit.Milliseconds(), S),
			Result:  holds(ok) + " (measured)", Holds: ok,
		})
	}
	pre := shutdown.PreStopSeconds(s.PreDrain)
	grace := shutdown.GraceSeconds(s.PreDrain, s.ShutdownTimeout)
	stop := shutdown.StopGraceSeconds(s.ShutdownTimeout)
	out = append(out,
		Formula{Formula: fmt.Sprintf("preStop sleep >= PRE_DRAIN_MS (%d)", P), Result: fmt.Sprintf("Kubernetes: preStop sleep %ds", pre), Holds: true},
		Formula{Formula: fmt.Sprintf("terminationGracePeriodSeconds > PRE_DRAIN_MS (%d) + SHUTDOWN_TIMEOUT_MS (%d)", P, S),
			Result: fmt.Sprintf("Kubernetes: terminationGracePeriodSeconds: %d (default 30: %s)", grace, holds(time.Duration(grace)*time.Second <= shutdown.DefaultTerminationGrace)), Holds: true},
		Formula{Formula: fmt.Sprintf("stop_grace_period >= SHUTDOWN_TIMEOUT_MS (%d) + %s", S, shutdown.Margin),
			Result: fmt.Sprintf("Compose: stop_grace_period: %ds (default 10s: %s)", stop, holds(s.ShutdownTimeout+shutdown.Margin <= shutdown.DefaultStopGrace)), Holds: true},
	)
	return out
}
