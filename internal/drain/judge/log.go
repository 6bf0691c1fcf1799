package judge

import (
	"sort"
	"strings"

	"github.com/healthctl/healthctl/internal/drain/evidence"
)

// The kinds of request in the request log, besides the polled endpoints
// (readiness, liveness, traffic).
const (
	// KindInflight is a slow request started before the signal.
	KindInflight = "inflight"
	// KindKeepAlive is what the kept-alive connection saw.
	KindKeepAlive = "keepalive"
)

// The results a request can end with.
const (
	ResultServed   = "served"    // an accepted status with its whole body
	ResultStatus   = "status"    // answered with a status that does not serve
	ResultCut      = "cut"       // answered, the body cut
	ResultRefused  = "refused"   // nothing accepted the connection
	ResultReset    = "reset"     // reset before an answer
	ResultEOF      = "eof"       // closed before an answer
	ResultNoAnswer = "no_answer" // nothing within the request's window
	ResultError    = "error"     // any other failure before an answer
	ResultClosed   = "closed"    // the kept-alive connection closed cleanly
)

// Record is one request of the request log: what drain-test asked, when
// (made: its connection attempt started; ended), and what it got. Every
// verdict is a function of these records, by the time each was made.
type Record struct {
	Kind     string  `json:"kind"`
	Endpoint string  `json:"endpoint,omitempty"`
	MadeMS   float64 `json:"made_ms"`
	EndedMS  float64 `json:"ended_ms"`
	Result   string  `json:"result"`
	Status   int     `json:"status,omitempty"`
	// GRPC is a gRPC health answer (SERVING, NOT_SERVING, UNIMPLEMENTED…):
	// then Status is absent (no HTTP status was sent).
	GRPC string `json:"grpc,omitempty"`
	// Framing is how an in-flight answer's body ended: "content-length",
	// "chunked" or "close-delimited" (no length: complete when the server
	// closed the connection, RFC 9112 §6.3).
	Framing string `json:"framing,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// pollResult is how a poll ended, in the log's words.
func pollResult(p evidence.Poll, served func(int) bool) string {
	switch {
	case p.Cut:
		return ResultCut
	case p.Answered() && served(p.Status):
		return ResultServed
	case p.Answered():
		return ResultStatus
	case p.Refused:
		return ResultRefused
	}
	return transportResult(p.Err)
}

// transportResult names a failure before any answer from its text.
func transportResult(err string) string {
	switch {
	case err == "":
		return ResultError
	case strings.Contains(err, "refused"):
		return ResultRefused
	case strings.Contains(err, "reset"), strings.Contains(err, "broken pipe"):
		return ResultReset
	case strings.Contains(err, "EOF"):
		return ResultEOF
	case strings.Contains(err, "timeout"):
		return ResultNoAnswer
	}
	return ResultError
}

// requestLog is every request of o, in the order they were made.
func requestLog(o evidence.Observation) []Record {
	served := evidence.OKStatus
	var out []Record
	for _, p := range o.Polls {
		ok := served
		if p.Probe == evidence.Traffic && o.TrafficOK != nil {
			ok = o.TrafficOK
		}
		r := Record{Kind: string(p.Probe), Endpoint: o.Endpoints[p.Probe], MadeMS: tms(p.At), EndedMS: tms(p.End()),
			Result: pollResult(p, ok), Status: p.Status}
		if r.Result != ResultServed && r.Result != ResultStatus {
			r.Detail = p.Err
		}
		if p.GRPC != "" && p.GRPC != "connected" {
			// The 200/503 stand in for SERVING/other in the verdicts:
			// the log says what the server really sent.
			r.Status, r.GRPC = 0, p.GRPC
		}
		out = append(out, r)
	}
	for _, q := range o.Inflight {
		r := Record{Kind: KindInflight, Endpoint: o.Endpoints[evidence.Inflight], MadeMS: tms(q.Made), EndedMS: tms(q.End), Status: q.Status, Framing: q.Framing}
		switch {
		case shortDelimited(q, o):
			r.Result, r.Detail = ResultCut, shortDelimitedWhy(q, o)
		case q.OK():
			r.Result = ResultServed
		case q.Status != 0 && q.Err == "" && q.Complete:
			r.Result = ResultStatus
		case q.Status != 0:
			r.Result, r.Detail = ResultCut, evidence.DescribeRequest(q)
		default:
			r.Result, r.Detail = transportResult(q.Err), q.Err
		}
		out = append(out, r)
	}
	for _, e := range o.KeepAlive.Events {
		r := Record{Kind: KindKeepAlive, Endpoint: o.Endpoints[evidence.Live], MadeMS: tms(e.At), EndedMS: tms(e.At), Detail: e.Detail}
		switch e.Kind {
		case evidence.KeepAliveReset:
			r.Result = ResultReset
		case evidence.KeepAliveNoAnswer:
			r.Result = ResultNoAnswer
		default:
			r.Result = ResultClosed
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].MadeMS < out[j].MadeMS })
	return out
}

// portAnswered says the port of p still answered, as a whole, when p got
// no answer: a request made after it (between half an interval and three
// intervals later) was answered, and no other request to that port made
// within three intervals of it went unanswered. A port that closed, or is
// closing worker by worker, as p was made is the listener's failure.
func portAnswered(o evidence.Observation, p evidence.Poll) bool {
	h := o.HostPorts[p.Probe]
	if h == "" {
		return false
	}
	answered := false
	for _, q := range o.Polls {
		if o.HostPorts[q.Probe] != h || q.Probe == p.Probe {
			continue
		}
		near := q.At >= p.At-3*evidence.Interval && q.At <= p.At+3*evidence.Interval
		switch {
		case near && !q.Answered():
			return false
		case q.Answered() && q.At >= p.At+evidence.Interval/2 && q.At <= p.At+3*evidence.Interval:
			answered = true
		}
	}
	return answered
}
