package classify

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/tlsinfo"
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

// proxyAnswer is the reason for an error answer a proxy generated itself:
// 407 wants the prober's credentials; 502, 503 and 504 say the proxy could
// not reach or hear from the server behind it (which may be down: the
// target's trouble as far as anyone can tell); anything else is the proxy
// refusing to pass the request on.
func proxyAnswer(status int) Reason {
	switch status {
	case http.StatusProxyAuthRequired:
		return ProxyAuthRequired
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return ProxyError
	}
	return ProxyRefused
}

// socksTarget reads a SOCKS5 CONNECT reply that reports the target's fate
// (RFC 1928 §6): 5 the target refused the connection, 3 and 4 it could not
// be reached from the proxy. Codes 1 and 2 (the proxy failed, its rules
// said no) and the rest are the proxy's own trouble (ok false). net/http's
// SOCKS5 client fails such a CONNECT with "unknown error " and the reply's
// standard text under the "socks connect" operation.
func socksTarget(err error) (Reason, bool) {
	switch SOCKSReply(err) {
	case "connection refused":
		return ConnRefused, true
	case "host unreachable":
		return HostUnreachable, true
	case "network unreachable":
		return NetUnreachable, true
	}
	return "", false
}

// SOCKSReply is the SOCKS5 reply text an error carries ("connection
// refused"), "" when it carries none.
func SOCKSReply(err error) string {
	var op *net.OpError
	if err == nil || !errors.As(err, &op) || op.Op != "socks connect" || op.Err == nil {
		return ""
	}
	if t, ok := strings.CutPrefix(op.Err.Error(), "unknown error "); ok {
		return t
	}
	return ""
}

// resolverFault is the reason of a lookup the resolver itself could not
// answer: it refused (REFUSED), could not use the query (FORMERR, NOTIMP)
// or gave no usable answer (a truncated reply whose TCP retry failed, a
// reply that does not parse). None of them says anything about the name.
func resolverFault(o Observation) (Reason, bool) {
	if o.Stage != StageDNS || o.Err == nil {
		return "", false
	}
	switch o.DNS {
	case DNSRefused:
		return ResolverRefused, true
	case DNSQueryError, DNSNoUsableAnswer:
		return ResolverError, true
	}
	return "", false
}

// tlsAlertReason names a TLS failure by what the server said or asked: a
// client certificate it wanted (asked for at the handshake or by
// renegotiation, or alerted about under TLS 1.3 after the request), no
// protocol version in common, or another alert.
func tlsAlertReason(o Observation, err error, op *net.OpError) (Reason, bool) {
	remote := op != nil && op.Op == "remote error"
	var alert tls.AlertError
	if errors.As(err, &alert) {
		remote = true
	}
	text := err.Error()
	switch {
	case remote && strings.Contains(text, "certificate required"):
		return TLSClientCertRequired, true
	case strings.Contains(text, "protocol version"), strings.Contains(text, "no supported versions"),
		strings.Contains(text, "unsupported versions"):
		return TLSProtocolVersion, true
	case o.ClientCertAsked && !o.ClientCertGiven && (remote || o.Stage == StageTLS ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(text, h2NotEstablished)):
		// Asked for a certificate, given none, and the connection
		// failed: the server turned the prober away for it. Under TLS
		// 1.3 its alert comes after the client's handshake is done, and
		// a request written then may fail first ("broken pipe", a
		// reset): the alert the server sent is the answer, not the
		// write's error.
		return TLSClientCertRequired, true
	case o.ClientCertAsked && o.ClientCertGiven && remote && refusedCert(text):
		return TLSClientCertRequired, true
	case remote:
		return TLSRemoteAlert, true
	}
	return "", false
}

// h2NotEstablished is net/http's HTTP/2 error for a connection that ended
// before the server's first frame (its SETTINGS) arrived: its cause (the
// alert a TLS 1.3 server sent after the handshake) is not kept.
const h2NotEstablished = "http2: client conn could not be established"

// refusedCert says an alert's text is one a server sends for a client
// certificate it does not accept.
func refusedCert(text string) bool {
	for _, s := range []string{"bad certificate", "unknown certificate authority", "certificate unknown", "access denied",
		"unsupported certificate", "expired certificate", "revoked certificate"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// isLocal says err is this machine's resource or permission failing before
// the target had a say: no descriptors, buffers or ports, or a local
// firewall refusing the socket (EPERM/EACCES only while dialling: later
// they are a file's, not the network's).
func isLocal(err error, stage Stage) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.EADDRNOTAVAIL} {
		if errors.Is(err, e) {
			return true
		}
	}
	if stage == StageDNS || stage == StageConnect {
		return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES)
	}
	return false
}

// resolverUnreachable says a DNS lookup failed because the DNS server
// itself could not be reached: its port refused the query, or no route led
// to it. A server that does not answer in time is a dns_timeout instead.
func resolverUnreachable(err error) bool {
	for _, e := range []error{syscall.ECONNREFUSED, syscall.ENETUNREACH, syscall.EHOSTUNREACH} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func timeoutAt(s Stage) Reason {
	switch s {
	case StageDNS:
		return DNSTimeout
	case StageConnect:
		return ConnectTimeout
	case StageTLS:
		return TLSHandshakeTimeout
	case StageBody, StageDone:
		return BodyTimeout
	case StageWrite:
		// No answer while the request body still went out.
		return RequestBodyTimeout
	}
	// StageHeaders and a forward proxy's silence.
	return HeadersTimeout
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// certReason recognises certificate verification failures. The x509 error
// types are values, so errors.As needs value targets.
func certReason(err error, now time.Time) (Reason, bool) {
	var order *tlsinfo.ChainOrderError
	if errors.As(err, &order) {
		// Out of order, not issued for another name: no certificate
		// being issued explains it.
		return TLSHandshakeFailure, true
	}
	var staple *tlsinfo.StapleError
	if errors.As(err, &staple) {
		if staple.Revoked {
			return TLSRevoked, true
		}
		return TLSMustStaple, true
	}
	var host x509.HostnameError
	if errors.As(err, &host) {
		return TLSHostnameMismatch, true
	}
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) {
		// Go keeps why a candidate authority was turned down only in
		// the error's text: a SHA-1 (or MD5) signature from a trusted
		// CA reads "… insecure algorithm SHA1-RSA …" (curl: "CA
		// signature digest algorithm too weak").
		if strings.Contains(ua.Error(), "insecure algorithm") {
			return TLSInsecureAlgorithm, true
		}
		return TLSUnknownAuthority, true
	}
	var ia x509.InsecureAlgorithmError
	if errors.As(err, &ia) {
		return TLSInsecureAlgorithm, true
	}
	var inv x509.CertificateInvalidError
	if errors.As(err, &inv) {
		if inv.Reason == x509.Expired {
			if inv.Cert != nil && now.Before(inv.Cert.NotBefore) {
				return TLSNotYetValid, true
			}
			return TLSExpired, true
		}
		return TLSHandshakeFailure, true
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return TLSHandshakeFailure, true
	}
	return "", false
}
