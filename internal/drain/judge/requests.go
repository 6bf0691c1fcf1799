package judge

// The requests' verdicts: INFLIGHT_ABORTED (the slow requests and traffic
// cut after P), NEW_REQUESTS_REFUSED (the traffic inside P) and
// KEEPALIVE_RESET.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/words"
)

// judgeInflight: every request in flight at the signal completes 2xx with
// its body. last is when the last request ended (notSeen: none ran).
func judgeInflight(o evidence.Observation, P time.Duration) (v Verdict, last time.Duration) {
	last = notSeen
	// Traffic requests accepted inside P and cut after it were in flight
	// when the pre-drain ended: their cut is this invariant's.
	var cutTraffic []string
	polls := append([]evidence.Poll(nil), o.Polls...)
	sort.SliceStable(polls, func(i, j int) bool { return polls[i].At < polls[j].At })
	for _, p := range polls {
		if p.Probe == evidence.Traffic && cutAfterPreDrain(o, p, P) {
			how := "a reset before any answer"
			switch {
			case p.Answered():
				how = evidence.Describe(p)
			case transportResult(p.Err) == ResultEOF:
				how = "the connection closed before any answer"
			}
			cutTraffic = append(cutTraffic, fmt.Sprintf("a traffic request made at %s (inside P, accepted) got %s at %s", ms(p.At), how, ms(p.End())))
		}
	}
	if len(cutTraffic) > 0 && (!o.InflightURL || len(o.Inflight) == 0) {
		return verdict(InflightAborted, false, "requests in flight when the pre-drain ended were cut: "+strings.Join(firstFew(cutTraffic), "; ")), last
	}
	switch {
	case !o.InflightURL:
		return skipped(InflightAborted, "no --inflight URL"), last
	case len(o.Inflight) == 0:
		return skipped(InflightAborted, "no in-flight request could be started"), last
	}
	var bad []string
	inFlight, delimited := 0, 0
	for i, q := range o.Inflight {
		last = max(last, q.End)
		if q.End < 0 && q.OK() && !shortDelimited(q, o) {
			continue // done before the signal: not in flight
		}
		inFlight++
		switch {
		case !q.OK():
			bad = append(bad, fmt.Sprintf("#%d %s at %s", i+1, evidence.DescribeRequest(q), ms(q.End)))
		case shortDelimited(q, o):
			bad = append(bad, fmt.Sprintf("#%d %s at %s", i+1, shortDelimitedWhy(q, o), ms(q.End)))
		case q.Framing == evidence.FramingClose:
			delimited++
		}
	}
	switch {
	case len(bad) > 0:
		detail := "in-flight requests cut: " + strings.Join(bad, "; ")
		if len(cutTraffic) > 0 {
			detail += "; and requests in flight when the pre-drain ended: " + strings.Join(firstFew(cutTraffic), "; ")
		}
		return verdict(InflightAborted, false, detail), last
	case len(cutTraffic) > 0:
		return verdict(InflightAborted, false, "requests in flight when the pre-drain ended were cut: "+strings.Join(firstFew(cutTraffic), "; ")), last
	case inFlight == 0:
		return skipped(InflightAborted, "every --inflight request finished before the signal: use a slower endpoint"), last
	}
	detail := fmt.Sprintf("%s completed 2xx with a full body (last at %s)", allOf(inFlight, "in-flight request"), ms(last))
	if delimited > 0 {
		detail += fmt.Sprintf("; %d close-delimited (no length: complete when the server closed the connection", delimited)
		if o.InflightBaseline > 0 {
			detail += fmt.Sprintf(", as long as the %d bytes the URL answered before the signal", o.InflightBaseline)
		}
		detail += ")"
	}
	return verdict(InflightAborted, true, detail), last
}

// firstFew is the first three of what, and how many more.
func firstFew(what []string) []string {
	if len(what) <= 3 {
		return what
	}
	return append(what[:3:3], fmt.Sprintf("%d more", len(what)-3))
}

// shortDelimited says q's body had no length, ended with the process and
// is shorter than the same URL's answer before the signal: a cut body. A
// close-delimited body is otherwise complete (RFC 9112 §6.3): Jetty's
// graceful stop answers in-flight requests so, then the JVM exits.
func shortDelimited(q evidence.Request, o evidence.Observation) bool {
	return q.OK() && endedWithProcess(q, o.Exit) && o.InflightBaseline >= 0 && q.Bytes < o.InflightBaseline
}

func shortDelimitedWhy(q evidence.Request, o evidence.Observation) string {
	return fmt.Sprintf("a close-delimited body of %d bytes, shorter than the %d bytes the same URL answered before the signal, ended with the process", q.Bytes, o.InflightBaseline)
}

// exitSlack is how close to the process's exit a body without a length
// may end and still count as ended by it: the kernel closes a dying
// process's sockets before its parent learns of the exit.
const exitSlack = 100 * time.Millisecond

// endedWithProcess says q's body had no length and ended when the process
// exited (or was killed): its end proves nothing.
func endedWithProcess(q evidence.Request, x evidence.Exit) bool {
	if !q.Delimited {
		return false
	}
	switch {
	case x.Killed:
		return q.End >= x.KilledAt-exitSlack
	case x.Gone:
		return q.End >= x.At-exitSlack
	}
	return false
}

// judgeTraffic: every traffic request made during [0, P) that got an
// answer was served: 200-399 (or --traffic-expect) with its whole body.
// One that got no answer is the listener's (LISTENER_CLOSED_EARLY) and is
// never counted as served.
func judgeTraffic(o evidence.Observation, P time.Duration) Verdict {
	switch {
	case o.Endpoints[evidence.Traffic] == "" && !o.InflightURL:
		return skipped(NewRequestsRefused, "no --traffic or --inflight URL: no traffic endpoint to send new requests to")
	case o.Endpoints[evidence.Traffic] == "" && o.InflightGRPC:
		return skipped(NewRequestsRefused, "no --traffic URL, and the --inflight URL is a gRPC call, not a traffic endpoint: name an HTTP app path with --traffic")
	}
	served := evidence.OKStatus
	if o.TrafficOK != nil {
		served = o.TrafficOK
	}
	var first *evidence.Poll
	n, answered, ok, cutLater, unansweredCut := 0, 0, 0, 0, 0
	for i, p := range o.Polls {
		if p.Probe != evidence.Traffic || p.At < 0 || p.At >= P {
			continue
		}
		n++
		if !p.Answered() {
			if cutAfterPreDrain(o, p, P) {
				cutLater++
				unansweredCut++
			}
			continue
		}
		answered++
		if cutAfterPreDrain(o, p, P) && served(p.Status) {
			// Served through P, its body cut once P was over:
			// INFLIGHT_ABORTED's, not a new request refused.
			cutLater++
			continue
		}
		if !p.Cut && served(p.Status) {
			ok++
			continue
		}
		if first == nil || p.At < first.At {
			first = &o.Polls[i]
		}
	}
	switch {
	case n == 0:
		return skipped(NewRequestsRefused, "no traffic request was made during the pre-drain")
	case first != nil:
		what := fmt.Sprintf("HTTP %d", first.Status)
		if first.Cut {
			what = fmt.Sprintf("HTTP %d with its body cut (%s)", first.Status, first.Err)
		}
		return verdict(NewRequestsRefused, false, fmt.Sprintf("a new request made at %s got %s, inside the pre-drain window (P = %s); %d of %d answered requests made in [0, %s) were not served: the orchestrator still routes requests there until it sees the flip%s", ms(first.At), what, ms(P), answered-ok-cutLater, answered, ms(P), trafficTo(o.Traffic)))
	case ok == 0:
		// Nothing was served, and nothing refused: no row says "0 of N
		// served" and calls it ok.
		why := fmt.Sprintf("none of the %s made in [0, %s) was served or refused", words.Plural(n, "traffic request"), ms(P))
		if cutLater > 0 {
			why += fmt.Sprintf(" (%d accepted, then cut after the pre-drain: %s)", cutLater, InflightAborted)
		}
		if rest := n - answered - unansweredCut; rest > 0 {
			why += fmt.Sprintf(" (%d got no answer)", rest)
		}
		return skipped(NewRequestsRefused, why+trafficTo(o.Traffic))
	}
	detail := fmt.Sprintf("%d of %d requests made in [0, %s) served", ok, n, ms(P))
	if cutLater > 0 {
		detail += fmt.Sprintf("; %d more accepted, then cut after the pre-drain (%s)", cutLater, InflightAborted)
	}
	if rest := n - answered - unansweredCut; rest > 0 {
		detail += fmt.Sprintf("; the other %d got no answer (%s)", rest, ListenerClosedEarly)
	}
	return verdict(NewRequestsRefused, true, detail+trafficTo(o.Traffic))
}

// trafficTo is "; traffic: URL (where it came from; its window)", "" when
// the observation does not say.
func trafficTo(t evidence.TrafficInfo) string {
	if t.URL == "" {
		return ""
	}
	return "; traffic to " + t.String()
}

// allOf is "the 1 request", "all 2 requests".
func allOf(n int, word string) string {
	if n == 1 {
		return "the 1 " + word
	}
	return "all " + words.Plural(n, word)
}

// judgeKeepAlive: no reset mid-response on a kept-alive connection.
func judgeKeepAlive(k evidence.KeepAlive) Verdict {
	if !k.Watched {
		return skipped(KeepaliveReset, k.Why)
	}
	for _, e := range k.Events {
		if e.Kind == evidence.KeepAliveReset {
			return verdict(KeepaliveReset, false, fmt.Sprintf("the kept-alive connection was reset at %s: %s", ms(e.At), e.Detail))
		}
	}
	how := "it stayed open"
	if n := len(k.Events); n > 0 {
		// The same words as the timeline's event.
		how = fmt.Sprintf("then at %s: %s", ms(k.Events[n-1].At), k.Events[n-1].Detail)
	}
	return verdict(KeepaliveReset, true, fmt.Sprintf("%s on the kept-alive connection after the signal; %s", words.Plural(k.Requests, "response"), how))
}
