package judge

// The readiness and liveness verdicts: the flip (READINESS_NEVER_FLIPS,
// READY_FLIP_LATE), READINESS_FLAPS and LIVENESS_FAILED_DURING_DRAIN, each
// in its endpoint's own words (NOT_READY_BEFORE's too).

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
)

// failStatus is an HTTP answer the kubelet counts as a failure.
func failStatus(status int) bool { return status >= 400 }

// pollsAfterSignal splits the polls made from the signal on by endpoint,
// each in the order they started.
func pollsAfterSignal(polls []evidence.Poll) (ready, live []evidence.Poll) {
	for _, p := range polls {
		if p.At < 0 {
			continue
		}
		switch p.Probe {
		case evidence.Ready:
			ready = append(ready, p)
		case evidence.Live:
			live = append(live, p)
		}
	}
	sort.SliceStable(ready, func(i, j int) bool { return ready[i].At < ready[j].At })
	sort.SliceStable(live, func(i, j int) bool { return live[i].At < live[j].At })
	return ready, live
}

// judgeFlip: readiness answers a status >= 400 (a status, not a transport
// error) within flipMax. flipIdx is the first such answer in ready, -1 when
// none came.
func judgeFlip(ready []evidence.Poll, flipMax time.Duration, up string) (v Verdict, flipIdx int) {
	flipIdx = -1
	for i, p := range ready {
		if failStatus(p.Status) {
			flipIdx = i
			break
		}
	}
	if flipIdx < 0 {
		seen := up + " on every poll"
		for _, p := range ready {
			if !evidence.OKStatus(p.Status) {
				seen = evidence.Describe(p) + " at " + ms(p.At)
				break
			}
		}
		want := "a status >= 400"
		if up != httpUp {
			// A gRPC (or other) health answer: no HTTP words in its row.
			want = "a health answer other than " + up
		}
		return verdict(ReadinessNeverFlips, false, "readiness never answered "+want+" after the signal (first other answer: "+seen+")"), flipIdx
	}
	if p := ready[flipIdx]; p.At > flipMax {
		return verdict(ReadyFlipLate, false, fmt.Sprintf("readiness answered %s at %s > --ready-flip-max %s", p.Said(), ms(p.At), ms(flipMax))), flipIdx
	}
	p := ready[flipIdx]
	return verdict(ReadyFlipLate, true, fmt.Sprintf("readiness answered %s at %s <= --ready-flip-max %s", p.Said(), ms(p.At), ms(flipMax))), flipIdx
}

// httpUp is how an HTTP endpoint's up answer is said.
const httpUp = "200-399"

// upWord says how endpoint p answers when up, in its own protocol's
// words: "200-399" over HTTP, else what its polls said ("SERVING" for
// gRPC health, "connected" for tcp://, "PONG" for Redis).
func upWord(o evidence.Observation, p evidence.Probe) string {
	if o.GRPC[p] {
		return "SERVING"
	}
	for _, q := range o.Polls {
		if q.Probe == p && evidence.OKStatus(q.Status) {
			if q.GRPC != "" {
				return q.GRPC
			}
			return httpUp
		}
	}
	return httpUp
}

// readyBeforeWords is NOT_READY_BEFORE's ok row in each endpoint's words.
func readyBeforeWords(o evidence.Observation) string {
	r, l := upWord(o, evidence.Ready), upWord(o, evidence.Live)
	if r == l {
		return "readiness and liveness " + answeredWord(r) + " before the signal"
	}
	return fmt.Sprintf("readiness %s and liveness %s before the signal", answeredWord(r), answeredWord(l))
}

// answeredWord is "answered SERVING", or "accepted a connection" for a
// tcp:// endpoint.
func answeredWord(up string) string {
	if up == "connected" {
		return "accepted a connection"
	}
	return "answered " + up
}

// judgeFlaps: readiness never answers 200-399 again once it flipped at
// ready[flipIdx].
func judgeFlaps(ready []evidence.Poll, flipIdx int) Verdict {
	if flipIdx < 0 {
		return skipped(ReadinessFlaps, "readiness never flipped")
	}
	for _, p := range ready[flipIdx+1:] {
		if evidence.OKStatus(p.Status) {
			return verdict(ReadinessFlaps, false, fmt.Sprintf("readiness answered %s again at %s after flipping at %s", p.Said(), ms(p.At), ms(ready[flipIdx].At)))
		}
	}
	return verdict(ReadinessFlaps, true, "readiness stayed not-ready after the flip")
}

// judgeLiveness: liveness answers 200-399 on every poll made during
// [0, P) while the process still ran. A poll that got no answer is the
// listener's (LISTENER_CLOSED_EARLY), unless its port answered other
// requests made then: a liveness handler that hangs on an open port is
// liveness's own failure. failed says a poll failed (something reacted to
// the signal).
func judgeLiveness(o evidence.Observation, live []evidence.Poll, P time.Duration) (v Verdict, failed bool) {
	x := o.Exit
	bad, n := -1, 0
	for i, p := range live {
		if p.At >= P || (x.Gone && p.At >= x.At) {
			continue
		}
		n++
		hung := !p.Answered() && !p.Refused && strings.Contains(p.Err, "timeout") && portAnswered(o, p)
		if bad < 0 && ((p.Answered() && !evidence.OKStatus(p.Status)) || hung) {
			bad = i
		}
	}
	if bad < 0 && n == 0 {
		// No row says "all 0 polls" and calls it ok.
		return skipped(LivenessFailedDuringDrain, fmt.Sprintf("no liveness poll was made in [0, %s) while pid %d ran (it was gone at %s)", ms(P), o.Pid, ms(x.At))), false
	}
	if bad < 0 {
		return verdict(LivenessFailedDuringDrain, true, fmt.Sprintf("liveness %s on %s made in [0, %s) that got an answer", answeredWord(upWord(o, evidence.Live)), allOf(n, "poll"), ms(P))), false
	}
	p := live[bad]
	return verdict(LivenessFailedDuringDrain, false, fmt.Sprintf("liveness answered %s to a poll made at %s, inside the pre-drain window (P = %s): %s", evidence.Describe(p), ms(p.At), ms(P), livenessWho)), true
}

// livenessWho says who acts on a liveness failure during the drain.
const livenessWho = "Docker with autoheal, ECS, Nomad, Consul and older Kubernetes restart a service whose liveness fails instead of letting it drain (current Kubernetes stops liveness probes once a pod is terminating)"
