package drain

import (
	"fmt"
	"sort"
	"strings"
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
	Detail   string  `json:"detail,omitempty"`
}

// pollResult is how a poll ended, in the log's words.
func pollResult(p Poll, served func(int) bool) string {
	switch {
	case p.Cut:
		return ResultCut
	case p.answered() && served(p.Status):
		return ResultServed
	case p.answered():
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
func requestLog(o Observation) []Record {
	served := okStatus
	var out []Record
	for _, p := range o.Polls {
		ok := served
		if p.Probe == Traffic && o.TrafficOK != nil {
			ok = o.TrafficOK
		}
		r := Record{Kind: string(p.Probe), Endpoint: o.Endpoints[p.Probe], MadeMS: tms(p.At), EndedMS: tms(p.end()),
			Result: pollResult(p, ok), Status: p.Status}
		if r.Result != ResultServed && r.Result != ResultStatus {
			r.Detail = p.Err
		}
		out = append(out, r)
	}
	for _, q := range o.Inflight {
		r := Record{Kind: KindInflight, Endpoint: o.Endpoints[Inflight], MadeMS: tms(q.Made), EndedMS: tms(q.End), Status: q.Status}
		switch {
		case q.ok() && endedWithProcess(q, o.Exit):
			r.Result, r.Detail = ResultCut, fmt.Sprintf("a body without a length ended with the process (%d bytes): could not be verified", q.Bytes)
		case q.ok():
			r.Result = ResultServed
		case q.Status != 0 && q.Err == "" && q.Complete:
			r.Result = ResultStatus
		case q.Status != 0:
			r.Result, r.Detail = ResultCut, describeRequest(q)
		default:
			r.Result, r.Detail = transportResult(q.Err), q.Err
		}
		out = append(out, r)
	}
	for _, e := range o.KeepAlive.Events {
		r := Record{Kind: KindKeepAlive, Endpoint: o.Endpoints[Live], MadeMS: tms(e.At), EndedMS: tms(e.At), Detail: e.Detail}
		switch e.Kind {
		case KeepAliveReset:
			r.Result = ResultReset
		case KeepAliveNoAnswer:
			r.Result = ResultNoAnswer
		default:
			r.Result = ResultClosed
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].MadeMS < out[j].MadeMS })
	return out
}

// hostOf is the endpoint's host:port ("" when unknown).
func (o Observation) hostOf(p Probe) string { return hostPort(o.Endpoints[p]) }

// portAnswered says the port of p still answered other requests made
// after it: one made between a quarter of a poll interval and three
// intervals later got an answer. A port that closed as p was made answers
// nothing made after it.
func portAnswered(o Observation, p Poll) bool {
	h := o.hostOf(p.Probe)
	if h == "" {
		return false
	}
	for _, q := range o.Polls {
		if q.answered() && o.hostOf(q.Probe) == h && q.At >= p.At+Interval/2 && q.At <= p.At+3*Interval {
			return true
		}
	}
	return false
}
