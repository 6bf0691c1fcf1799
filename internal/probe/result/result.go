package result

import (
	"iter"
	"math/bits"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/tlsinfo"
)

// Phase names a step of a probe, in the order they happen.
type Phase string

// The phases a probe records. ttfb runs from the request
// written to the first response byte; writing the request (usually
// microseconds) is in no phase of its own, only in total.
const (
	PhaseDNS     Phase = "dns"
	PhaseConnect Phase = "connect"
	// PhaseProxy is the proxy opening the way, once connected to it: the
	// CONNECT answered, or the SOCKS5 handshake done.
	PhaseProxy    Phase = "proxy"
	PhaseTLS      Phase = "tls"
	PhaseTTFB     Phase = "ttfb"
	PhaseTransfer Phase = "transfer"
	PhaseTotal    Phase = "total"
)

// Phases lists the phases in waterfall order.
var Phases = []Phase{PhaseDNS, PhaseConnect, PhaseProxy, PhaseTLS, PhaseTTFB, PhaseTransfer, PhaseTotal}

// Timings holds the phases reached; a phase not reached is absent. It is
// an array by phase, not a map: a sweep keeps one a target, and sets and
// reads each phase several times (probe, report line, metrics), which as
// map operations were a few per cent of its CPU time. The zero value has
// no phase.
type Timings struct {
	d   [numPhases]time.Duration
	set uint8 // bit i: Phases[i] reached
}

const numPhases = 7

// phaseIndex is ph's place in Phases, -1 for a name that is not a phase.
func phaseIndex(ph Phase) int {
	switch ph {
	case PhaseDNS:
		return 0
	case PhaseConnect:
		return 1
	case PhaseProxy:
		return 2
	case PhaseTLS:
		return 3
	case PhaseTTFB:
		return 4
	case PhaseTransfer:
		return 5
	case PhaseTotal:
		return 6
	}
	return -1
}

// TimingsOf makes the Timings of m (tests, fixtures); a name in m that is
// not a phase is dropped.
func TimingsOf(m map[Phase]time.Duration) Timings {
	var t Timings
	for ph, d := range m {
		t.Set(ph, d)
	}
	return t
}

// Set records ph's duration; a name that is not a phase is ignored.
func (t *Timings) Set(ph Phase, d time.Duration) {
	if i := phaseIndex(ph); i >= 0 {
		t.d[i] = d
		t.set |= 1 << i
	}
}

// Get is ph's duration, and whether ph was reached.
func (t Timings) Get(ph Phase) (time.Duration, bool) {
	i := phaseIndex(ph)
	if i < 0 || t.set&(1<<i) == 0 {
		return 0, false
	}
	return t.d[i], true
}

// Has reports whether ph was reached.
func (t Timings) Has(ph Phase) bool {
	_, ok := t.Get(ph)
	return ok
}

// Of is ph's duration, 0 when it was not reached.
func (t Timings) Of(ph Phase) time.Duration {
	d, _ := t.Get(ph)
	return d
}

// Len is the number of phases reached.
func (t Timings) Len() int { return bits.OnesCount8(t.set) }

// String lists the phases reached, in waterfall order ("map[connect:1ms
// total:2ms]", as the map it replaced printed): for test failures and logs.
func (t Timings) String() string {
	var b strings.Builder
	b.WriteString("map[")
	for ph, d := range t.All() {
		if b.Len() > 4 {
			b.WriteByte(' ')
		}
		b.WriteString(string(ph) + ":" + d.String())
	}
	b.WriteByte(']')
	return b.String()
}

// All yields the phases reached in waterfall order.
func (t Timings) All() iter.Seq2[Phase, time.Duration] {
	return func(yield func(Phase, time.Duration) bool) {
		for i, ph := range Phases {
			if t.set&(1<<i) != 0 && !yield(ph, t.d[i]) {
				return
			}
		}
	}
}

// Result is what one probe observed and how it was classified. Every string in
// it is already redacted.
type Result struct {
	URL         string
	Outcome     classify.Outcome
	Reason      classify.Reason
	Error       string
	HTTPStatus  int
	HTTPVersion string
	Address     string
	IPFamily    int
	Timings     Timings
	Redirect    *Redirect
	// Hops are the redirects followed (--follow), in order.
	Hops []Hop
	// Downgrade is set when a redirect (followed or reported) went from
	// https to plain http: what follows it is readable on the wire.
	Downgrade bool
	// Proxy is the proxy the request went through (redacted), "" when
	// direct; Address is then the proxy's.
	Proxy string
	// DialAttempts lists every address tried for the last connection,
	// in the order the attempts started, when there was more than one.
	DialAttempts []DialAttempt
	// Addresses holds one result per address of the name with
	// --all-addresses (more than one address); the Result itself is then
	// the worst of them, with a summary as its Error.
	Addresses []Result
	// RetryAfter is the server's Retry-After, when it sent one.
	RetryAfter *time.Duration
	// BodyExcerpt is the start of the body of an answer that did not
	// pass (a status not expected, a failed condition), redacted, "" for
	// a pass or an empty body.
	BodyExcerpt string
	// WWWAuthenticate and ProxyAuthenticate are the challenges of an
	// answer that did not pass (a 401's, a 407's), redacted.
	WWWAuthenticate   string
	ProxyAuthenticate string
	// Degraded says why an answer that passed is degraded: the degraded
	// condition that held (reason degraded).
	Degraded      string
	BodyTruncated bool
	TLS           *TLSInfo
	// ProxyTLS is an https:// proxy's own handshake (nil without one).
	ProxyTLS *TLSInfo
	// Answer is what the server of a kind other than HTTP answered
	// (gRPC health, Redis, PostgreSQL, a connect), in the one shape every
	// kind gives; nil for HTTP.
	Answer classify.Answer
	// Canceled is true when the caller's context ended the probe (Ctrl-C):
	// not a probe result at all.
	Canceled bool
	// Started is when the probe began (wall clock, for the policy's age).
	Started time.Time
	// ContentLength is an HTTP answer's Content-Length (-1: not given)
	// and BodyRead the bytes of its body read (decoded, up to the cap).
	ContentLength int64
	BodyRead      int64
	// LastModified is an HTTP answer's Last-Modified (zero: none).
	LastModified time.Time
	// AnswerConditionFailed: the condition that failed was on the answer
	// itself (TLS or not, HTTP version, encoding, body size), not on its
	// content (Expect.Answer).
	AnswerConditionFailed bool
}

// Redirect is a 3xx answer that was reported rather than followed.
type Redirect struct {
	Location  string `json:"location"`
	OtherHost bool   `json:"other_host"`
	// Invalid is set when the Location is not an http(s) URL; Location
	// is then the server's text, redacted.
	Invalid bool `json:"invalid,omitempty"`
}

// Hop is one redirect that was followed: the URL asked, its status and
// where it sent the probe (both redacted).
type Hop struct {
	URL      string `json:"url"`
	Status   int    `json:"status"`
	Location string `json:"location"`
}

// TLSInfo describes the handshake, also when verification failed.
type TLSInfo = tlsinfo.Info

// OCSP is what the server's stapled OCSP response said.
type OCSP = tlsinfo.OCSP

// CertInfo is one presented certificate.
type CertInfo = tlsinfo.Cert

// DialAttempt is one address tried: how it ended and how long it took.
// Error is empty for the attempt that connected.
type DialAttempt struct {
	Address string  `json:"address"`
	Error   string  `json:"error,omitempty"`
	MS      float64 `json:"ms"`
	// Duration is MS as a duration (for -v).
	Duration time.Duration `json:"-"`
}
