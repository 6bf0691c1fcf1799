// Package probe runs one probe on a fresh connection and records what
// happened: the phases it went through (also when it failed part-way), the
// address it dialled, the TLS chain it was shown, and the raw error with the
// stage it happened in. It never prints and writes no prose: classify names
// the outcome and makes the error sentence from the facts recorded here.
//
// # Protocols
//
// Each protocol is one row of the scheme table (internal/scheme) and one file
// in an exchange package (httpprobe: http.go, net/http's Transport; http1.go, the plain HTTP/1.1 case
// httpprobe.New picks for an http:// URL with no proxy for it, --follow 0 and no
// HTTP/2, on Request.Write and http.ReadResponse, with the Transport's own
// answers and errors but none of its goroutines; grpc.go, the gRPC health
// call over net/http's HTTP/2, grpcprobe; streamprobe's tcp.go, tcp:// and tls://; ...) holding a type
// that implements session.Exchange and its constructor, which exchanges.go gives the row's kind. Run
// picks the exchange by the URL's scheme; everything else is shared through
// the *session.Probe it is given:
//   - the dialler, p.Dial: --resolve, the DNS client (p.lookup, with
//     --dns-server and the follow-up query that tells NXDOMAIN from
//     NODATA), -4/-6, RFC 8305 racing, the connect window;
//   - the TLS capture, p.TLSConfig: verification after the handshake, so
//     version, cipher and the presented chain are recorded also when
//     verification fails;
//   - the windows (connect, read, max-time: p.Arm, p.Disarm) and the phase
//     recorder (p.Enter, p.Record), whose stage names a timeout's phase.
//
// An exchange's Run does the I/O and returns the error that ended it; its
// Describe fills in what the answer said (status, version, conditions;
// for a row of a kind other than HTTP, the kind's classify.Answer, always,
// read or not) once the timers have stopped. The common finish (session's finish) records the
// phases, judges a closed window, and asks classify for the outcome,
// reason and sentence.
//
// httpprobe's exported builders (NewRequest, Dialer, TLSConfig, Transport) give
// other callers (drain-test) the same request, dialler and TLS
// configuration a probe uses.
package probe

import (
	"context"
	"time"

	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

// Run probes once. It returns within opts.MaxTime (plus scheduling noise)
// whatever the server does; ctx cancellation (Ctrl-C) ends it early with
// Result.Canceled set.
func Run(ctx context.Context, opts *scheme.Options) Result {
	if opts.AllAddresses {
		return runAll(ctx, opts)
	}
	return session.New(opts, session.Hooks{}).Do(ctx, exchangeFor(opts.URL.Scheme))
}

// The result of a probe, as session records it (internal/probe/result): the front door's names
// for it, so the callers of Run name one package.
type (
	Result      = result.Result
	Phase       = result.Phase
	Timings     = result.Timings
	Redirect    = result.Redirect
	Hop         = result.Hop
	TLSInfo     = result.TLSInfo
	OCSP        = result.OCSP
	CertInfo    = result.CertInfo
	DialAttempt = result.DialAttempt
)

// The phases, in waterfall order (Phases).
const (
	PhaseDNS      = result.PhaseDNS
	PhaseConnect  = result.PhaseConnect
	PhaseProxy    = result.PhaseProxy
	PhaseTLS      = result.PhaseTLS
	PhaseTTFB     = result.PhaseTTFB
	PhaseTransfer = result.PhaseTransfer
	PhaseTotal    = result.PhaseTotal
)

// Phases lists the phases in waterfall order.
var Phases = result.Phases

// TimingsOf is result.TimingsOf: the timings of a map of phases.
func TimingsOf(m map[Phase]time.Duration) Timings { return result.TimingsOf(m) }

// WithCloser is session.WithCloser: a context whose cancellation closes
// the connections of the probes run under it, and its release.
func WithCloser(ctx context.Context) (context.Context, func()) { return session.WithCloser(ctx) }
