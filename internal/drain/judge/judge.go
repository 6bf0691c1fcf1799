package judge

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
)

// The verdict names (SPEC.md §7, §9): each names the invariant that failed.
const (
	NotReadyBefore            = "NOT_READY_BEFORE"
	ReadinessNeverFlips       = "READINESS_NEVER_FLIPS"
	ReadyFlipLate             = "READY_FLIP_LATE"
	ReadinessFlaps            = "READINESS_FLAPS"
	LivenessFailedDuringDrain = "LIVENESS_FAILED_DURING_DRAIN"
	ListenerClosedEarly       = "LISTENER_CLOSED_EARLY"
	NewRequestsRefused        = "NEW_REQUESTS_REFUSED"
	InflightAborted           = "INFLIGHT_ABORTED"
	KeepaliveReset            = "KEEPALIVE_RESET"
	ShutdownHang              = "SHUTDOWN_HANG"
	NonzeroExit               = "NONZERO_EXIT"
	SignalNotForwarded        = "SIGNAL_NOT_FORWARDED"
	WrapperExitedEarly        = "WRAPPER_EXITED_EARLY"
	ExitCodeUnknown           = "EXIT_CODE_UNKNOWN"
)

// Verdict is one invariant judged.
type Verdict struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Skipped says the invariant could not be judged in this run (no
	// --inflight URL, exit status unknown, ...); it does not fail the run.
	Skipped bool   `json:"skipped"`
	Detail  string `json:"detail"`
}

// Event is one point of the timeline, in ms since the signal.
type Event struct {
	TMS    float64 `json:"t_ms"`
	Event  string  `json:"event"`
	Detail string  `json:"detail,omitempty"`
}

// Report is Judge's answer.
type Report struct {
	OK       bool
	Verdicts []Verdict
	Timeline []Event
	// Requests is the request log every verdict was judged from.
	Requests []Record
	// Facts are the measured moments; Formulas uses the exit.
	Facts Facts
	// NotChecked are the invariants this run could not judge (skipped
	// verdicts): a PASS is bare only when there are none.
	NotChecked []NotChecked
	// Starved is set when the run failed while drain-test was starved
	// past StarvedBound: the outcome is unknown (exit 9), and the
	// failures seen are not named as the service's.
	Starved *Starved
}

// NotChecked is an invariant a run did not check, and why.
type NotChecked struct {
	Verdict string `json:"verdict"`
	// What is what was not checked, as the PASS line says it:
	// "in-flight", "traffic", "keep-alive", "exit status".
	What string `json:"what"`
	Why  string `json:"why"`
}

// checkedWhat names what each verdict checks, for "in-flight not checked"
// (built on first use: a package-level map literal is built at every
// start, probe included).
var checkedWhat = sync.OnceValue(func() map[string]string {
	return map[string]string{
		InflightAborted:           "in-flight",
		NewRequestsRefused:        "traffic",
		KeepaliveReset:            "keep-alive",
		NonzeroExit:               "exit status",
		ExitCodeUnknown:           "exit status",
		ReadinessFlaps:            "readiness flaps",
		LivenessFailedDuringDrain: "liveness",
		NotReadyBefore:            "readiness before the signal",
		ReadinessNeverFlips:       "readiness flip",
		ReadyFlipLate:             "readiness flip",
		ListenerClosedEarly:       "listener",
		ShutdownHang:              "exit time",
		SignalNotForwarded:        "signal",
		WrapperExitedEarly:        "wrapper",
	}
})

// NotCheckedLine is "in-flight not checked, keep-alive not checked" ("":
// every invariant was checked).
func (r Report) NotCheckedLine() string {
	var parts []string
	for _, n := range r.NotChecked {
		parts = append(parts, n.What+" not checked")
	}
	return strings.Join(parts, ", ")
}

// Facts are the measured moments, since the signal (negative: not seen).
type Facts struct {
	Flip, ListenerClosed, LastInflight, Exit time.Duration
}

const notSeen = time.Duration(-1)

// ms renders a duration as whole milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// Judge checks each invariant drain-test judges against what was observed,
// one verdict per invariant, in a fixed order. It is pure: the same
// observation always gives the same report.
func Judge(o evidence.Observation, s evidence.Settings) Report {
	r := Report{Timeline: timeline(o, s.PreDrain), Requests: requestLog(o)}
	if !o.ReadyBefore {
		r.Verdicts = []Verdict{verdict(NotReadyBefore, false, o.NotReadyWhy+"; no signal was sent, nothing else was judged")}
		r.Facts = Facts{notSeen, notSeen, notSeen, notSeen}
		return r
	}
	ready, live := pollsAfterSignal(o.Polls)
	flipV, flipIdx := judgeFlip(ready, s.ReadyFlipMax, upWord(o, evidence.Ready))
	liveV, liveFailed := judgeLiveness(o, live, s.PreDrain)
	closeV, closed := judgeListener(o, s.PreDrain)
	inflightV, lastInflight := judgeInflight(o, s.PreDrain)
	flip := notSeen
	if flipIdx >= 0 {
		flip = ready[flipIdx].At
	}
	r.Verdicts = []Verdict{
		verdict(NotReadyBefore, true, readyBeforeWords(o)),
		flipV,
		judgeFlaps(ready, flipIdx),
		liveV,
		closeV,
		judgeTraffic(o, s.PreDrain),
		inflightV,
		judgeKeepAlive(o.KeepAlive),
		judgeShutdown(o.Exit, s),
		judgeExitStatus(o, flip, closed, s.PreDrain),
		judgeSignal(o, flip, liveFailed),
		judgeWrapper(o, flip),
	}
	r.OK = true
	for _, v := range r.Verdicts {
		if !v.OK {
			r.OK = false
		}
	}
	if !r.OK && o.Lateness.Max > StarvedBound {
		// What failed by timing alone (a poll that timed out, a flip or
		// an exit seen late) may be drain-test's own lateness: not named,
		// each row keeps what was seen. What the server did (a refusal,
		// a reset, a status, an exit status) is named all the same.
		st := &Starved{LatenessMS: tms(o.Lateness.Max), AtMS: tms(o.Lateness.At), What: o.Lateness.What, BoundMS: tms(StarvedBound)}
		for i, v := range r.Verdicts {
			if !v.OK && byTimingAlone(o, s, v.Name, flip, o.Lateness.Max) {
				st.Seen = append(st.Seen, v.Name)
				r.Verdicts[i] = skipped(v.Name, "not judged, "+st.Why()+"; seen: "+v.Detail)
			}
		}
		if len(st.Seen) > 0 {
			r.Starved = st
		}
		// r.OK stays false: a failed verdict is named or unknown now.
	}
	for _, v := range r.Verdicts {
		if v.Skipped {
			r.NotChecked = append(r.NotChecked, NotChecked{Verdict: v.Name, What: checkedWhat()[v.Name], Why: v.Detail})
		}
	}
	exitAt := notSeen
	if o.Exit.Gone && !o.Exit.Killed {
		exitAt = o.Exit.At
	}
	r.Facts = Facts{Flip: flip, ListenerClosed: closed, LastInflight: lastInflight, Exit: exitAt}
	return r
}

// verdict is an invariant judged; skipped is one that could not be.
func verdict(name string, ok bool, detail string) Verdict {
	return Verdict{Name: name, OK: ok, Detail: detail}
}

func skipped(name, detail string) Verdict {
	return Verdict{Name: name, OK: true, Skipped: true, Detail: detail}
}
