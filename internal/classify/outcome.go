// Package classify maps what a probe observed to one outcome and one reason.
// It is pure: no I/O, no clock; the probe hands it an Observation.
package classify

import "sync"

// Outcome is one of the closed outcomes: the reachability probe's six, and
// unknown for a probe this machine could not make at all.
type Outcome string

// The outcomes. The set is closed: the reconciler's table is written against it.
const (
	Pass        Outcome = "pass"
	Unreachable Outcome = "unreachable"
	TLS         Outcome = "tls"
	Timeout     Outcome = "timeout"
	Refused     Outcome = "refused"
	DNS         Outcome = "dns"
	// Unknown is a probe that could not be made from here: the fault is the
	// prober's own (out of file descriptors or ports, a local firewall, an
	// unreachable DNS server), never the target's.
	Unknown Outcome = "unknown"
)

// Outcomes lists every outcome in the contract's order.
var Outcomes = []Outcome{Pass, Unreachable, TLS, Timeout, Refused, DNS, Unknown}

// Reason refines an outcome. It is a closed set of snake_case strings; raw
// error text never goes here.
type Reason string

// The reasons: a closed, documented set (docs/outcomes.md).
const (
	OK Reason = "ok"
	// Degraded is an answer that passed and that a degraded condition
	// (--degraded-if-json, --degraded-if-body) marks as degraded: the
	// service answers, and says it is not fully well.
	Degraded Reason = "degraded"

	DNSNXDomain  Reason = "dns_nxdomain"
	DNSNoAddress Reason = "dns_no_address"
	DNSServfail  Reason = "dns_servfail"

	DNSTimeout          Reason = "dns_timeout"
	ConnectTimeout      Reason = "connect_timeout"
	TLSHandshakeTimeout Reason = "tls_handshake_timeout"
	HeadersTimeout      Reason = "headers_timeout"
	BodyTimeout         Reason = "body_timeout"
	// RequestBodyTimeout: the read window closed with no answer while
	// the request body was still being written (the server stopped
	// reading it).
	RequestBodyTimeout Reason = "request_body_timeout"

	ConnRefused Reason = "conn_refused"

	TLSUnknownAuthority Reason = "tls_unknown_authority"
	// TLSInsecureAlgorithm is a chain signed with an algorithm no longer
	// trusted (SHA-1, MD5) by an authority that is otherwise trusted.
	TLSInsecureAlgorithm Reason = "tls_insecure_algorithm"
	TLSHostnameMismatch  Reason = "tls_hostname_mismatch"
	TLSExpired           Reason = "tls_expired"
	TLSNotYetValid       Reason = "tls_not_yet_valid"
	TLSNotTLS            Reason = "tls_not_tls"
	// TLSClientCertRequired is a server that asked for a client
	// certificate (at the handshake or by renegotiation) and was given
	// none, or refused the one given.
	TLSClientCertRequired Reason = "tls_client_cert_required"
	// TLSProtocolVersion is a server with no TLS version in common with
	// the client (a TLS 1.0-only server, say).
	TLSProtocolVersion Reason = "tls_protocol_version"
	// TLSRevoked is a certificate the OCSP response the server stapled
	// says is revoked.
	TLSRevoked Reason = "tls_revoked"
	// TLSMustStaple is a must-staple certificate (RFC 7633) the server
	// stapled no OCSP response with.
	TLSMustStaple       Reason = "tls_must_staple"
	TLSRemoteAlert      Reason = "tls_remote_alert"
	TLSHandshakeFailure Reason = "tls_handshake_failure"

	HTTPStatus      Reason = "http_status"
	Redirect        Reason = "redirect"
	ConditionFailed Reason = "condition_failed"
	ConnReset       Reason = "conn_reset"
	HostUnreachable Reason = "host_unreachable"
	NetUnreachable  Reason = "net_unreachable"
	ProtocolError   Reason = "protocol_error"
	ProxyError      Reason = "proxy_error"
	NoURL           Reason = "no_url"

	// LocalError is a resource or permission of this machine (EMFILE,
	// ENFILE, ENOBUFS, EADDRNOTAVAIL, EPERM/EACCES on socket or connect).
	LocalError Reason = "local_error"
	// ResolverUnreachable is a DNS server that did not accept the query
	// (refused, unreachable); one that does not answer in time is dns_timeout.
	ResolverUnreachable Reason = "resolver_unreachable"
	// ResolverRefused is a DNS server that answered REFUSED: it will not
	// answer this client (or for this name), which says nothing about
	// the name.
	ResolverRefused Reason = "resolver_refused"
	// ResolverError is a DNS server that could not use the query or gave
	// no usable answer: FORMERR, NOTIMP, a truncated answer whose TCP
	// retry failed, a reply that does not parse.
	ResolverError Reason = "resolver_error"
	// ProxyUnreachable is a configured proxy that could not be reached.
	ProxyUnreachable Reason = "proxy_unreachable"
	// ProxyAuthRequired is a proxy that answered 407.
	ProxyAuthRequired Reason = "proxy_auth_required"
	// ProxyRefused is a proxy that answered the CONNECT with an error of
	// its own (403, a closed connection…).
	ProxyRefused Reason = "proxy_refused"
	// ProxyTLS is an https:// proxy whose own TLS failed: its certificate
	// refused (verified against the proxy's name: --proxy-cacert,
	// --proxy-insecure), a plain-HTTP proxy given as https://, an alert.
	ProxyTLS Reason = "proxy_tls"
	// ProxyTimeout is a proxy that took the connection and never
	// answered the CONNECT (or the SOCKS5 handshake).
	ProxyTimeout Reason = "proxy_timeout"
)

// reasonOutcome is the one table from reason to outcome (built when first
// asked for: not at start-up, which every probe pays).
var reasonOutcome = sync.OnceValue(func() map[Reason]Outcome {
	return map[Reason]Outcome{
		OK:       Pass,
		Degraded: Pass,

		DNSNXDomain:  DNS,
		DNSNoAddress: DNS,
		DNSServfail:  DNS,

		DNSTimeout:          Timeout,
		ConnectTimeout:      Timeout,
		TLSHandshakeTimeout: Timeout,
		HeadersTimeout:      Timeout,
		BodyTimeout:         Timeout,
		RequestBodyTimeout:  Timeout,

		ConnRefused: Refused,

		TLSUnknownAuthority:   TLS,
		TLSInsecureAlgorithm:  TLS,
		TLSHostnameMismatch:   TLS,
		TLSExpired:            TLS,
		TLSNotYetValid:        TLS,
		TLSNotTLS:             TLS,
		TLSClientCertRequired: TLS,
		TLSProtocolVersion:    TLS,
		TLSRevoked:            TLS,
		TLSMustStaple:         TLS,
		TLSRemoteAlert:        TLS,
		TLSHandshakeFailure:   TLS,

		HTTPStatus:      Unreachable,
		Redirect:        Unreachable,
		ConditionFailed: Unreachable,
		ConnReset:       Unreachable,
		HostUnreachable: Unreachable,
		NetUnreachable:  Unreachable,
		ProtocolError:   Unreachable,
		ProxyError:      Unreachable,
		NoURL:           Unreachable,

		LocalError:          Unknown,
		ResolverUnreachable: Unknown,
		ResolverRefused:     Unknown,
		ResolverError:       Unknown,
		ProxyUnreachable:    Unknown,
		ProxyAuthRequired:   Unknown,
		ProxyRefused:        Unknown,
		ProxyTimeout:        Unknown,
		ProxyTLS:            Unknown,
	}
})

// Reasons lists every reason, grouped by outcome in the contract's order:
// the generic ones listed here, and each kind's own (Declare) after the
// unreachable ones.
var Reasons = []Reason{
	OK, Degraded,
	DNSNXDomain, DNSNoAddress, DNSServfail,
	DNSTimeout, ConnectTimeout, TLSHandshakeTimeout, HeadersTimeout, BodyTimeout, RequestBodyTimeout,
	ConnRefused,
	TLSUnknownAuthority, TLSInsecureAlgorithm, TLSHostnameMismatch, TLSExpired, TLSNotYetValid, TLSNotTLS, TLSClientCertRequired, TLSProtocolVersion, TLSRevoked, TLSMustStaple, TLSRemoteAlert, TLSHandshakeFailure,
	HTTPStatus, Redirect, ConditionFailed, ConnReset, HostUnreachable, NetUnreachable, ProtocolError, ProxyError, NoURL,
	LocalError, ResolverUnreachable, ResolverRefused, ResolverError, ProxyUnreachable, ProxyAuthRequired, ProxyRefused, ProxyTimeout, ProxyTLS,
}

// Outcome returns the outcome a reason belongs to.
func (r Reason) Outcome() Outcome {
	if o, ok := reasonOutcome()[r]; ok {
		return o
	}
	if d, ok := declared[r]; ok {
		return d.Outcome
	}
	return Unreachable
}
