package classify

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"syscall"
	"time"
)

// Stage is where a probe was when it stopped: the classifier names timeouts
// after it and uses it to tell a TLS failure from an HTTP one.
type Stage string

// The stages of one request, in order.
const (
	StageDNS     Stage = "dns"
	StageConnect Stage = "connect"
	StageTLS     Stage = "tls"
	// StageProxy runs from the connection to a proxy being made to the
	// proxy's answer: to CONNECT (https), or to the request itself (plain
	// http, where the proxy answers for the server behind it).
	StageProxy Stage = "proxy"
	// StageHeaders runs from the connection being ready to the response
	// headers read (request written, waiting for the answer).
	StageHeaders Stage = "headers"
	// StageWrite is StageHeaders while the request body is still going
	// out: the server has not taken all of it (a server that never reads
	// an upload). Its timeout is request_body_timeout — the write of the
	// request's body was the phase running, no answer came — whose
	// sentence names the bytes written.
	StageWrite Stage = "write"
	StageBody  Stage = "body"
	StageDone  Stage = "done"
)

// DNSAnswer is what a follow-up query learned about a name Go reported as
// "no such host": Go alone cannot tell NXDOMAIN from an empty answer.
type DNSAnswer int

// The answers a follow-up query can give, and what the resolver's own
// replies said when they were no answer about the name at all.
const (
	DNSUnknown DNSAnswer = iota
	DNSNameMissing
	DNSNoRecords
	// DNSServerFailure: the server answered SERVFAIL.
	DNSServerFailure
	// DNSRefused: the server answered REFUSED.
	DNSRefused
	// DNSQueryError: the server answered FORMERR or NOTIMP.
	DNSQueryError
	// DNSNoUsableAnswer: a truncated reply whose TCP retry failed, or a
	// reply that does not parse.
	DNSNoUsableAnswer
)

// Describe says what a resolver's replies amounted to, for the answers
// that are the resolver's own trouble ("" for the others).
func (a DNSAnswer) Describe() string {
	switch a {
	case DNSRefused:
		return "the DNS server refused to answer (REFUSED)"
	case DNSServerFailure:
		return "the DNS server failed to answer (SERVFAIL)"
	case DNSNoUsableAnswer:
		return "the DNS server gave no usable reply"
	}
	return ""
}

// Observation is everything the classifier needs; the probe fills it.
type Observation struct {
	// Kind is the row's kind, nil for HTTP: a probe of a kind is judged
	// by its Answer, never by HTTP's status rules.
	Kind *Kind
	// Answer is what the kind's exchange read (nil for HTTP; a kind's
	// exchange always gives one, read or not).
	Answer Answer
	// Refuted: the kind's exchange knows, whatever error ended it, that
	// the server does not speak the kind's protocol (a gRPC server with
	// no HTTP/2): Kind.NotProtocol, unless a window, the network or the
	// certificate said first.
	Refuted bool

	// Err is the error that ended the probe, nil when a response arrived
	// and its body was read.
	Err error
	// Stage is where the probe was when Err happened or its window closed.
	Stage Stage
	// WindowClosed is true when one of the probe's own windows (connect,
	// read, max-time) ended it; Err is then only the symptom.
	WindowClosed bool
	// Proxied is true when the connection went to a proxy.
	Proxied bool
	// DNS is the follow-up answer for a "no such host" error, or what the
	// resolver's replies said for any other failed lookup.
	DNS DNSAnswer

	// ClientCertAsked: the server asked for a client certificate, at the
	// handshake or by renegotiation; ClientCertGiven: one was configured
	// (--cert/--key).
	ClientCertAsked bool
	ClientCertGiven bool

	// ProxyStatus is the status a proxy answered the CONNECT with (0
	// when it did not answer, or for a forward proxy); ProxyGenerated
	// says the final response is the proxy's own (a CONNECT's error
	// answer, or a forwarded request's answer carrying X-Squid-Error or
	// an RFC 9209 Proxy-Status error).
	ProxyStatus    int
	ProxyGenerated bool
	// ProxyTLSFailed: an https:// proxy's own handshake began and did not
	// succeed (its certificate refused, not TLS, an alert).
	ProxyTLSFailed bool

	StatusCode      int
	StatusExpected  bool
	HasLocation     bool
	ConditionFailed bool
	// Degraded: the answer passed, and a degraded condition held.
	Degraded bool

	// Now is when the error was seen; it tells an expired certificate from
	// a not-yet-valid one (Go gives both the same x509.Expired reason).
	Now time.Time
}

// Classify maps an observation to its outcome and reason. The order of the
// checks matters: our own windows first (a closed window shows up as any
// kind of error), DNS errors before generic timeouts (a DNS timeout also
// matches context.DeadlineExceeded), certificates before resets.
func Classify(o Observation) (Outcome, Reason) {
	r := reason(o)
	return r.Outcome(), r
}

func reason(o Observation) Reason {
	if o.Err == nil {
		if o.Kind != nil {
			// A kind's answer is its own: never HTTP's status rules,
			// and no answer at all is not a pass.
			if o.Answer == nil {
				return o.Kind.notProtocol()
			}
			return o.Answer.Reason()
		}
		switch {
		case o.Proxied && o.StatusCode == http.StatusProxyAuthRequired:
			// Only a proxy sends 407: it wants credentials of the
			// prober, and says nothing about the target.
			return ProxyAuthRequired
		case o.Proxied && o.ProxyGenerated:
			return proxyAnswer(o.StatusCode)
		case !o.StatusExpected && o.StatusCode >= 300 && o.StatusCode < 400 && o.HasLocation:
			return Redirect
		case !o.StatusExpected:
			return HTTPStatus
		case o.ConditionFailed:
			return ConditionFailed
		case o.Degraded:
			return Degraded
		}
		return OK
	}
	if r, ok := resolverFault(o); ok {
		// The resolver's own trouble, whatever ended the lookup (a
		// reply that does not parse is ignored by Go's resolver until
		// the window closes).
		return r
	}
	if o.WindowClosed {
		if o.Stage == StageProxy {
			// The proxy took the connection and did not answer.
			return ProxyTimeout
		}
		if o.Proxied && o.Stage == StageConnect {
			return ProxyTimeout
		}
		return timeoutAt(o.Stage)
	}
	err := o.Err
	// This machine's own trouble looks like the network's (an *net.OpError
	// from dial, a *net.DNSError): it is checked before anything blames
	// the target.
	if isLocal(err, o.Stage) {
		return LocalError
	}

	var op *net.OpError
	if o.Proxied && o.ProxyStatus != 0 {
		// The proxy answered the CONNECT with an error of its own.
		return proxyAnswer(o.ProxyStatus)
	}
	if o.Proxied && o.ProxyTLSFailed {
		// The proxy's own TLS: the prober's trouble, never the target's.
		if isTimeout(err) {
			return ProxyTimeout
		}
		return ProxyTLS
	}
	if o.Proxied && (o.Stage == StageDNS || o.Stage == StageConnect) {
		if isTimeout(err) {
			return ProxyTimeout
		}
		return ProxyUnreachable
	}
	if errors.As(err, &op) && op.Op == "proxyconnect" {
		if isTimeout(err) {
			return ProxyTimeout
		}
		return ProxyUnreachable
	}
	if r, ok := socksTarget(err); ok {
		// The SOCKS5 proxy reported what became of the target.
		return r
	}
	if o.Proxied && o.Stage == StageProxy {
		// The proxy took the connection and closed it, or broke the
		// SOCKS5 handshake, without opening the way.
		if isTimeout(err) {
			return ProxyTimeout
		}
		return ProxyRefused
	}

	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		switch {
		case resolverUnreachable(err):
			return ResolverUnreachable
		case dnsErr.IsNotFound && o.DNS == DNSNoRecords:
			return DNSNoAddress
		case dnsErr.IsNotFound:
			return DNSNXDomain
		case dnsErr.IsTimeout:
			return DNSTimeout
		}
		return DNSServfail
	}

	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return ConnRefused
	case errors.Is(err, syscall.EHOSTUNREACH):
		return HostUnreachable
	case errors.Is(err, syscall.ENETUNREACH):
		return NetUnreachable
	}

	if r, ok := certReason(err, o.Now); ok {
		return r
	}
	if o.Kind != nil && o.Refuted {
		return o.Kind.notProtocol()
	}
	if errors.Is(err, ErrNotTLS) {
		return TLSNotTLS
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) || errors.Is(err, http.ErrSchemeMismatch) {
		return TLSNotTLS
	}
	if r, ok := tlsAlertReason(o, err, op); ok {
		return r
	}

	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return ConnReset
	}
	if isTimeout(err) {
		return timeoutAt(o.Stage)
	}
	switch o.Stage {
	case StageTLS:
		return TLSHandshakeFailure
	case StageDNS, StageConnect:
		return HostUnreachable
	}
	// The connection was made and what came back was not a whole HTTP
	// answer: garbage, nothing at all, or a body cut short. For a kind
	// that is an answer not of its protocol (a gRPC call: no HTTP/2
	// preface, an HTTP/1 server's reply read as a frame).
	return o.Kind.notProtocol()
}
