package probe

import (
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

// Timings holds the phases reached; a phase not reached is absent.
type Timings map[Phase]time.Duration

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
	RetryAfter    *time.Duration
	BodyTruncated bool
	TLS           *TLSInfo
	// GRPC is what a grpc:// or grpcs:// health call answered (nil for
	// other protocols).
	GRPC *GRPCInfo
	// Canceled is true when the caller's context ended the probe (Ctrl-C):
	// not a probe result at all.
	Canceled bool
	// Started is when the probe began (wall clock, for the policy's age).
	Started time.Time
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

// CertInfo is one presented certificate.
type CertInfo = tlsinfo.Cert
