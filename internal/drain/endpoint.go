package drain

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// endpoints are the probe options of each URL drain-test speaks to.
type endpoints map[evidence.Probe]*scheme.Options

// endpoints returns each configured URL's options: the command's, or
// plain defaults (a GET, no TLS settings) for a URL given without.
func (cfg Config) endpoints() endpoints {
	ep := endpoints{}
	for which, u := range map[evidence.Probe]string{evidence.Ready: cfg.ReadyURL, evidence.Live: cfg.LiveURL, evidence.Inflight: cfg.InflightURL, evidence.Traffic: cfg.TrafficURL} {
		if u == "" {
			continue
		}
		if o := cfg.Opts[which]; o != nil {
			ep[which] = o
			continue
		}
		pu, err := url.Parse(u)
		if err != nil {
			continue
		}
		ep[which] = &scheme.Options{URL: pu, Method: http.MethodGet, Header: http.Header{},
			UserAgent: "healthctl-drain-test", Network: "tcp",
			ConnectTimeout: pollTimeout, ReadTimeout: pollTimeout, MaxBody: 64 << 10,
			Redactor: redact.NewRedactor(nil, nil)}
	}
	return ep
}

// poll is one health request through the probe, on a fresh connection (as
// the kubelet does), bounded by pollTimeout: its failure carries the
// probe's classified reason.
func poll(ctx context.Context, opts *scheme.Options, which evidence.Probe) timedPoll {
	return pollWithin(ctx, opts, which, pollTimeout)
}

// pollWithin is poll with window bounding the answer. A health poll's
// connection is bounded by pollTimeout and its answer by the probe's
// --connect-timeout/--read-timeout when they are shorter; a traffic
// request's windows are drain-test's own: connect, first byte and whole
// body all within window (min(S, 5 s) or --traffic-timeout), never the
// probe's 2 s read default (a slow --inflight path, the traffic endpoint
// without --traffic, answered in 3 s is served, not cut).
func pollWithin(ctx context.Context, opts *scheme.Options, which evidence.Probe, window time.Duration) timedPoll {
	tp := timedPoll{Poll: evidence.Poll{Probe: which}, start: time.Now()}
	o := *opts
	o.Follow = 0 // the kubelet's 3xx is an answer
	if which == evidence.Traffic {
		o.ConnectTimeout, o.ReadTimeout = window, window
	} else {
		o.ConnectTimeout = min(nonZero(o.ConnectTimeout, pollTimeout), pollTimeout)
		o.ReadTimeout = min(nonZero(o.ReadTimeout, window), window)
	}
	o.MaxTime = window
	o.Expect = expect.Expectations{} // the status is judged here, 200-399
	res := proberOf(ctx)(ctx, &o)
	end := time.Now()
	if cs, ok := connStart(res); ok && cs.After(tp.start) && cs.Before(end) {
		// The poll was made when its connection attempt began, not when
		// its goroutine did: on a loaded machine the two lie tens of ms
		// apart, and an attempt charged too early would blame a listener
		// that closed on time.
		tp.start = cs
	}
	tp.Took = end.Sub(tp.start)
	if a, ok := res.Answer.(interface{ Reset() string }); ok && a.Reset() != "" {
		// The server tore the call down (grpcio's stop(0) ends the calls
		// in flight UNAVAILABLE or CANCELLED): no health answer, so no
		// flip (a draining server says NOT_SERVING); the port no longer
		// answering is the listener's.
		tp.Err = "gRPC call ended " + a.Reset() + " by the server: no health answer (reset)"
		return tp
	}
	if said := answerSaid(res); said != "" {
		// A kind's answer (a gRPC health status, a Redis PING reply,
		// PostgreSQL accepting connections): its pass is ready; any
		// other answer (NOT_SERVING, what grpc-go's health Shutdown()
		// says before GracefulStop; loading, shutting down, no slot
		// left) is the flip.
		tp.GRPC, tp.Status = said, http.StatusServiceUnavailable
		if res.Outcome == classify.Pass {
			tp.Status = http.StatusOK
		}
		return tp
	}
	if res.HTTPStatus != 0 {
		tp.Status = res.HTTPStatus
		switch res.Reason {
		case classify.OK, classify.HTTPStatus, classify.Redirect, classify.ConditionFailed, "":
		default:
			// An answer whose body did not arrive whole (shorter than
			// its Content-Length, no last chunk, a reset or a stall
			// while reading it): answered, not served.
			tp.Cut, tp.Err = true, string(res.Reason)
		}
		return tp
	}
	if row, _ := scheme.LookupScheme(o.URL.Scheme); row.Path == scheme.PathNone && res.Outcome == classify.Pass {
		// A connect (and handshake, and the dialogue when one is given)
		// is all a tcpSocket probe asks: a protocol whose URL has no
		// path and whose answer was none of the above (tcp://, tls://).
		tp.GRPC, tp.Status = "connected", http.StatusOK
		return tp
	}
	tp.Refused = res.Reason == classify.ConnRefused
	switch {
	case tp.Refused:
		tp.Err = "connection refused"
	case res.Outcome == classify.Timeout:
		tp.Err = "timeout (" + string(res.Reason) + ")"
	case res.Reason != "":
		tp.Err = string(res.Reason) + ": " + res.Error
	default:
		tp.Err = res.Error
	}
	tp.Err = fitHint(tp.Err)
	return tp
}

// emptyReplyHint is the probe's guess for an empty reply to plain HTTP;
// closedHint is what it means here.
const (
	emptyReplyHint = " (an empty reply; a TLS port does this to plain HTTP: is the URL https://?)"
	closedHint     = " (an empty reply: the server closed the connection)"
)

// fitHint keeps a detail's hint only where the evidence fits it: every
// endpoint answered HTTP before the signal (drain-test signals nothing
// otherwise), so an empty reply during the shutdown is the server
// closing, not a TLS port. A TLS record in the answer keeps its hint.
func fitHint(err string) string {
	return strings.Replace(err, emptyReplyHint, closedHint, 1)
}

func nonZero(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

type timedPoll struct {
	evidence.Poll
	start time.Time
}

// withTimeout is opts with its connect window at most d: for a dial (a
// check of a port, the kept-alive connection) bounded like a poll.
func withTimeout(opts *scheme.Options, d time.Duration) *scheme.Options {
	o := *opts
	o.ConnectTimeout = min(nonZero(o.ConnectTimeout, d), d)
	return &o
}

// connStart is when a probe's connection attempt began: its start plus the
// time before the phases that follow the lookup (connect, proxy, tls, ttfb,
// transfer), so gaps of scheduling before the dial count as before it. ok is
// false without timings.
func connStart(res probe.Result) (time.Time, bool) {
	total, ok := res.Timings.Get(probe.PhaseTotal)
	if !ok || res.Started.IsZero() {
		return time.Time{}, false
	}
	after := time.Duration(0)
	for _, ph := range []probe.Phase{probe.PhaseConnect, probe.PhaseProxy, probe.PhaseTLS, probe.PhaseTTFB, probe.PhaseTransfer} {
		after += res.Timings.Of(ph)
	}
	if after > total {
		return time.Time{}, false
	}
	return res.Started.Add(total - after), true
}

// answerSaid is what a kind's server answered in its own words (Said: a
// gRPC status, a PING reply, "accepting connections", a SQLSTATE), "" when
// it answered nothing of its protocol (or the probe was HTTP).
func answerSaid(res probe.Result) string {
	if res.Answer == nil {
		return ""
	}
	return res.Answer.Said()
}
