package classify

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestClassify covers the decision order on error values shaped exactly as
// Go returns them (the probe and script suites produce the same values from
// real servers; this table pins the order of the checks).
func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	future := &x509.Certificate{NotBefore: now.Add(time.Hour), NotAfter: now.Add(48 * time.Hour)}
	past := &x509.Certificate{NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-time.Hour)}
	dial := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	read := func(err error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}
	}
	verify := func(err error) error { return &tls.CertificateVerificationError{Err: err} }
	dnsTimeout := &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}

	cases := []struct {
		name string
		obs  Observation
		want Reason
	}{
		{"pass", Observation{StatusCode: 200, StatusExpected: true}, OK},
		{"503", Observation{StatusCode: 503}, HTTPStatus},
		{"302 with location", Observation{StatusCode: 302, HasLocation: true}, Redirect},
		{"304 without location", Observation{StatusCode: 304}, HTTPStatus},
		{"3xx expected", Observation{StatusCode: 302, HasLocation: true, StatusExpected: true}, OK},
		{"condition", Observation{StatusCode: 200, StatusExpected: true, ConditionFailed: true}, ConditionFailed},
		{"window in dns", Observation{Err: errors.New("context canceled"), WindowClosed: true, Stage: StageDNS}, DNSTimeout},
		{"window in connect", Observation{Err: errors.New("x"), WindowClosed: true, Stage: StageConnect}, ConnectTimeout},
		{"window in tls", Observation{Err: errors.New("x"), WindowClosed: true, Stage: StageTLS}, TLSHandshakeTimeout},
		{"window in headers", Observation{Err: errors.New("x"), WindowClosed: true, Stage: StageHeaders}, HeadersTimeout},
		{"window in body", Observation{Err: errors.New("x"), WindowClosed: true, Stage: StageBody}, BodyTimeout},
		{"window beats refused", Observation{Err: dial(syscall.ECONNREFUSED), WindowClosed: true, Stage: StageConnect}, ConnectTimeout},
		{"nxdomain", Observation{Err: &net.DNSError{Err: "no such host", IsNotFound: true}, Stage: StageDNS, DNS: DNSNameMissing}, DNSNXDomain},
		{"nxdomain unknown", Observation{Err: &net.DNSError{Err: "no such host", IsNotFound: true}, Stage: StageDNS}, DNSNXDomain},
		{"no address", Observation{Err: &net.DNSError{Err: "no such host", IsNotFound: true}, Stage: StageDNS, DNS: DNSNoRecords}, DNSNoAddress},
		{"servfail", Observation{Err: &net.DNSError{Err: "server misbehaving", IsTemporary: true}, Stage: StageDNS}, DNSServfail},
		// Since Go 1.23 a DNS timeout also matches DeadlineExceeded: DNS first.
		{"dns timeout", Observation{Err: dnsTimeout, Stage: StageDNS}, DNSTimeout},
		{"refused", Observation{Err: dial(syscall.ECONNREFUSED), Stage: StageConnect}, ConnRefused},
		{"host unreachable", Observation{Err: dial(syscall.EHOSTUNREACH), Stage: StageConnect}, HostUnreachable},
		{"net unreachable", Observation{Err: dial(syscall.ENETUNREACH), Stage: StageConnect}, NetUnreachable},
		{"os connect timeout", Observation{Err: dial(syscall.ETIMEDOUT), Stage: StageConnect}, ConnectTimeout},
		{"reset", Observation{Err: read(syscall.ECONNRESET), Stage: StageBody}, ConnReset},
		{"unknown authority", Observation{Err: verify(x509.UnknownAuthorityError{}), Stage: StageTLS}, TLSUnknownAuthority},
		{"hostname", Observation{Err: verify(x509.HostnameError{Host: "x"}), Stage: StageTLS}, TLSHostnameMismatch},
		{"expired", Observation{Err: verify(x509.CertificateInvalidError{Cert: past, Reason: x509.Expired}), Stage: StageTLS, Now: now}, TLSExpired},
		{"not yet valid", Observation{Err: verify(x509.CertificateInvalidError{Cert: future, Reason: x509.Expired}), Stage: StageTLS, Now: now}, TLSNotYetValid},
		{"other invalid", Observation{Err: verify(x509.CertificateInvalidError{Reason: x509.NotAuthorizedToSign}), Stage: StageTLS}, TLSHandshakeFailure},
		{"not tls", Observation{Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, Stage: StageTLS}, TLSNotTLS},
		{"scheme mismatch", Observation{Err: fmt.Errorf("get: %w", http.ErrSchemeMismatch), Stage: StageHeaders}, TLSNotTLS},
		// TLS 1.3: the certificate_required alert arrives after the request.
		{"cert required alert", Observation{Err: &net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}, Stage: StageHeaders}, TLSClientCertRequired},
		{"remote alert", Observation{Err: &net.OpError{Op: "remote error", Err: errors.New("tls: internal error")}, Stage: StageTLS}, TLSRemoteAlert},
		{"protocol version alert", Observation{Err: &net.OpError{Op: "remote error", Err: errors.New("tls: protocol version not supported")}, Stage: StageTLS}, TLSProtocolVersion},
		{"protocol version local", Observation{Err: errors.New("tls: server selected unsupported protocol version 301"), Stage: StageTLS}, TLSProtocolVersion},
		// TLS 1.2: asked at the handshake, none given, a generic alert.
		{"asked, none given", Observation{Err: &net.OpError{Op: "remote error", Err: errors.New("tls: handshake failure")}, Stage: StageTLS, ClientCertAsked: true}, TLSClientCertRequired},
		// Asked by renegotiation, none given: the server closes.
		{"renegotiation, none given", Observation{Err: io.ErrUnexpectedEOF, Stage: StageHeaders, ClientCertAsked: true}, TLSClientCertRequired},
		{"asked, refused", Observation{Err: &net.OpError{Op: "remote error", Err: errors.New("tls: unknown certificate authority")}, Stage: StageTLS, ClientCertAsked: true, ClientCertGiven: true}, TLSClientCertRequired},
		{"asked, given, other alert", Observation{Err: &net.OpError{Op: "remote error", Err: errors.New("tls: internal error")}, Stage: StageTLS, ClientCertAsked: true, ClientCertGiven: true}, TLSRemoteAlert},
		{"eof in tls", Observation{Err: errors.New("EOF"), Stage: StageTLS}, TLSHandshakeFailure},
		{"eof in headers", Observation{Err: errors.New("EOF"), Stage: StageHeaders}, ProtocolError},
		{"proxyconnect", Observation{Err: &net.OpError{Op: "proxyconnect", Err: dial(syscall.ECONNREFUSED)}, Stage: StageConnect, Proxied: true}, ProxyUnreachable},
		{"proxy dns", Observation{Err: &net.DNSError{Err: "no such host", IsNotFound: true}, Stage: StageDNS, Proxied: true}, ProxyUnreachable},
		{"proxy slow", Observation{Err: dial(syscall.ETIMEDOUT), Stage: StageConnect, Proxied: true}, ProxyTimeout},
		{"proxy connect window", Observation{Err: errors.New("x"), WindowClosed: true, Stage: StageConnect, Proxied: true}, ProxyTimeout},
		{"proxy hangs (window)", Observation{Err: errors.New("context canceled"), WindowClosed: true, Stage: StageProxy, Proxied: true}, ProxyTimeout},
		{"proxy closes", Observation{Err: errors.New("EOF"), Stage: StageProxy, Proxied: true}, ProxyRefused},
		{"CONNECT 407", Observation{Err: errors.New("Proxy Authentication Required"), Stage: StageProxy, Proxied: true, ProxyStatus: 407}, ProxyAuthRequired},
		{"CONNECT 403", Observation{Err: errors.New("Forbidden"), Stage: StageProxy, Proxied: true, ProxyStatus: 403}, ProxyRefused},
		{"CONNECT 503", Observation{Err: errors.New("Service Unavailable"), Stage: StageProxy, Proxied: true, ProxyStatus: 503}, ProxyError},
		{"proxy 407", Observation{StatusCode: 407, Proxied: true}, ProxyAuthRequired},
		{"forward: squid's own 503", Observation{StatusCode: 503, Proxied: true, ProxyGenerated: true}, ProxyError},
		{"forward: squid's own 403", Observation{StatusCode: 403, Proxied: true, ProxyGenerated: true}, ProxyRefused},
		{"forward: the server's 503", Observation{StatusCode: 503, Proxied: true}, HTTPStatus},
		{"407 without a proxy", Observation{StatusCode: 407}, HTTPStatus},
		{"dns refused", Observation{Err: &net.DNSError{Err: "server misbehaving", IsTemporary: true}, Stage: StageDNS, DNS: DNSRefused}, ResolverRefused},
		{"dns formerr", Observation{Err: &net.DNSError{Err: "server misbehaving", IsTemporary: true}, Stage: StageDNS, DNS: DNSQueryError}, ResolverError},
		{"dns tc then closed", Observation{Err: &net.DNSError{Err: "server misbehaving", IsTemporary: true}, Stage: StageDNS, DNS: DNSNoUsableAnswer}, ResolverError},
		{"dns garbled (window)", Observation{Err: errors.New("x"), WindowClosed: true, Stage: StageDNS, DNS: DNSNoUsableAnswer}, ResolverError},
		{"dns servfail seen", Observation{Err: &net.DNSError{Err: "server misbehaving", IsTemporary: true}, Stage: StageDNS, DNS: DNSServerFailure}, DNSServfail},
		{"tcp connected", Observation{Kind: testKind, Answer: testAnswer(OK)}, OK},
		{"tcp refused", Observation{Kind: testKind, Err: dial(syscall.ECONNREFUSED), Stage: StageConnect}, ConnRefused},
		{"tls handshake done", Observation{Kind: testKind, Answer: testAnswer(OK)}, OK},
		{"tls expired", Observation{Kind: testKind, Err: verify(x509.CertificateInvalidError{Cert: past, Reason: x509.Expired}), Stage: StageTLS, Now: now}, TLSExpired},
		{"body write window", Observation{Err: errors.New("x"), WindowClosed: true, Stage: StageWrite}, RequestBodyTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, r := Classify(c.obs)
			// The outcome is checked against the literal copy of the contract's
			// reason table below, not against the code's own table.
			want, ok := specOutcome[c.want]
			if !ok {
				t.Fatalf("%s is not in the contract's reason table", c.want)
			}
			if r != c.want || o != want {
				t.Errorf("got %s/%s, want %s/%s", o, r, want, c.want)
			}
		})
	}
}

// specOutcome is a literal copy of the product contract's reasons by outcome.
var specOutcome = map[Reason]Outcome{
	"ok":                       "pass",
	"degraded":                 "pass", // the degraded result of a pass (§3, §4)
	"dns_nxdomain":             "dns",
	"dns_no_address":           "dns",
	"dns_servfail":             "dns",
	"dns_timeout":              "timeout",
	"connect_timeout":          "timeout",
	"tls_handshake_timeout":    "timeout",
	"headers_timeout":          "timeout",
	"body_timeout":             "timeout",
	"request_body_timeout":     "timeout",
	"conn_refused":             "refused",
	"tls_unknown_authority":    "tls",
	"tls_insecure_algorithm":   "tls",
	"tls_hostname_mismatch":    "tls",
	"tls_expired":              "tls",
	"tls_not_yet_valid":        "tls",
	"tls_not_tls":              "tls",
	"tls_client_cert_required": "tls",
	"tls_protocol_version":     "tls",
	"tls_revoked":              "tls",
	"tls_must_staple":          "tls",
	"tls_remote_alert":         "tls",
	"tls_handshake_failure":    "tls",
	"http_status":              "unreachable",
	"redirect":                 "unreachable",
	"condition_failed":         "unreachable",
	"conn_reset":               "unreachable",
	"host_unreachable":         "unreachable",
	"net_unreachable":          "unreachable",
	"protocol_error":           "unreachable",
	"proxy_error":              "unreachable",
	"no_url":                   "unreachable",
	"local_error":              "unknown",
	"resolver_unreachable":     "unknown",
	"resolver_refused":         "unknown",
	"resolver_error":           "unknown",
	"proxy_unreachable":        "unknown",
	"proxy_auth_required":      "unknown",
	"proxy_refused":            "unknown",
	"proxy_timeout":            "unknown",
	"proxy_tls":                "unknown",
	"grpc_not_serving":         "unreachable",
	"grpc_service_unknown":     "unreachable",
	"grpc_unimplemented":       "unreachable",
	"grpc_status":              "unreachable",
	"grpc_protocol":            "unreachable",
	// SPEC §13: the Redis and PostgreSQL rows.
	"redis_loading":                 "unreachable",
	"redis_masterdown":              "unreachable",
	"redis_busy":                    "unreachable",
	"redis_auth":                    "unreachable",
	"redis_cluster_down":            "unreachable",
	"redis_error":                   "unreachable",
	"redis_protocol":                "unreachable",
	"postgres_starting_up":          "unreachable",
	"postgres_shutting_down":        "unreachable",
	"postgres_recovery":             "unreachable",
	"postgres_too_many_connections": "unreachable",
	"postgres_auth":                 "unreachable",
	"postgres_database":             "unreachable",
	"postgres_read_only":            "unreachable",
	"postgres_error":                "unreachable",
	"postgres_protocol":             "unreachable",
}

// TestReasonOutcomeMatchesSpec compares the code's table with the literal
// copy of the contract's table, both ways.
func TestReasonOutcomeMatchesSpec(t *testing.T) {
	for r, want := range specOutcome {
		if got := r.Outcome(); got != want {
			t.Errorf("%s: code says %s, the contract says %s", r, got, want)
		}
	}
	for _, r := range Reasons {
		if _, ok := specOutcome[r]; !ok {
			t.Errorf("%s is in the code, not in the contract's table", r)
		}
	}
}

func TestEveryReasonHasAnOutcome(t *testing.T) {
	seen := map[Reason]bool{}
	for _, r := range Reasons {
		if seen[r] {
			t.Errorf("%s listed twice", r)
		}
		seen[r] = true
		_, generic := reasonOutcome()[r]
		_, kinds := declared[r]
		if !generic && !kinds {
			t.Errorf("%s has no outcome", r)
		}
	}
	if len(seen) != len(reasonOutcome())+len(declared) {
		t.Errorf("Reasons lists %d, the tables have %d", len(seen), len(reasonOutcome())+len(declared))
	}
}

// testKind and testAnswer are a kind as a row declares one, for the
// generic order of the checks.
var testKind = &Kind{Name: "test", NotProtocol: "test_protocol"}

type testAnswer Reason

func (testAnswer) Kind() *Kind               { return testKind }
func (a testAnswer) Reason() Reason          { return Reason(a) }
func (testAnswer) Text(Reason, error) string { return "" }
func (testAnswer) Said() string              { return "" }
func (testAnswer) Status() string            { return "" }
func (testAnswer) Lines() []string           { return nil }
func (testAnswer) JSON() any                 { return nil }

// TestKindNeverFallsToHTTP: a kind's probe that read no answer is its
// kind's no-answer reason, never judged by HTTP's status rules (a zero
// status would be http_status, a pass with StatusExpected), and a protocol
// error after connecting is the kind's.
func TestKindNeverFallsToHTTP(t *testing.T) {
	for _, o := range []Observation{
		{Kind: testKind},
		{Kind: testKind, StatusExpected: true},
		{Kind: testKind, StatusCode: 200, StatusExpected: true},
		{Kind: testKind, Err: io.ErrUnexpectedEOF, Stage: StageHeaders},
		{Kind: testKind, Err: errors.New("x"), Stage: StageHeaders, Refuted: true},
	} {
		if _, r := Classify(o); r != "test_protocol" {
			t.Errorf("%+v: %s, want the kind's test_protocol", o, r)
		}
	}
	if _, r := Classify(Observation{Kind: testKind, Answer: testAnswer("test_other"), StatusCode: 200, StatusExpected: true}); r != "test_other" {
		t.Errorf("an answer's reason: %s, want test_other", r)
	}
	if _, r := Classify(Observation{Kind: &Kind{Name: "bare"}, Err: io.ErrUnexpectedEOF, Stage: StageHeaders}); r != ProtocolError {
		t.Errorf("a kind without its own: %s, want protocol_error", r)
	}
}

func BenchmarkClassify(b *testing.B) {
	obs := Observation{Err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, Stage: StageConnect}
	for b.Loop() {
		Classify(obs)
	}
}
