package classify

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
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
		{"remote alert", Observation{Err: &net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}, Stage: StageHeaders}, TLSRemoteAlert},
		{"eof in tls", Observation{Err: errors.New("EOF"), Stage: StageTLS}, TLSHandshakeFailure},
		{"eof in headers", Observation{Err: errors.New("EOF"), Stage: StageHeaders}, ProtocolError},
		{"proxyconnect", Observation{Err: &net.OpError{Op: "proxyconnect", Err: dial(syscall.ECONNREFUSED)}, Stage: StageConnect, Proxied: true}, ProxyError},
		{"proxy refused CONNECT", Observation{Err: errors.New("Forbidden"), Stage: StageConnect, Proxied: true}, ProxyError},
		{"proxy dns", Observation{Err: &net.DNSError{Err: "no such host", IsNotFound: true}, Stage: StageDNS, Proxied: true}, ProxyError},
		{"proxy slow", Observation{Err: dial(syscall.ETIMEDOUT), Stage: StageConnect, Proxied: true}, ConnectTimeout},
		{"proxy hangs (window)", Observation{Err: errors.New("context canceled"), WindowClosed: true, Stage: StageProxy, Proxied: true}, ProxyError},
		{"proxy closes", Observation{Err: errors.New("EOF"), Stage: StageProxy, Proxied: true}, ProxyError},
		{"proxy refuses CONNECT", Observation{Err: errors.New("Proxy Authentication Required"), Stage: StageProxy, Proxied: true}, ProxyError},
		{"proxy 407", Observation{StatusCode: 407, Proxied: true}, ProxyError},
		{"407 without a proxy", Observation{StatusCode: 407}, HTTPStatus},
		{"tcp connected", Observation{Protocol: ProtoTCP}, OK},
		{"tcp refused", Observation{Protocol: ProtoTCP, Err: dial(syscall.ECONNREFUSED), Stage: StageConnect}, ConnRefused},
		{"tls handshake done", Observation{Protocol: ProtoTLS}, OK},
		{"tls expired", Observation{Protocol: ProtoTLS, Err: verify(x509.CertificateInvalidError{Cert: past, Reason: x509.Expired}), Stage: StageTLS, Now: now}, TLSExpired},
		{"grpc serving", Observation{Protocol: ProtoGRPC, GRPC: &GRPCAnswer{Serving: 1}}, OK},
		{"grpc not serving", Observation{Protocol: ProtoGRPC, GRPC: &GRPCAnswer{Serving: 2}}, GRPCNotServing},
		{"grpc status UNKNOWN", Observation{Protocol: ProtoGRPC, GRPC: &GRPCAnswer{Serving: 0}}, GRPCNotServing},
		{"grpc status from a newer server", Observation{Protocol: ProtoGRPC, GRPC: &GRPCAnswer{Serving: 9}}, GRPCNotServing},
		{"grpc SERVICE_UNKNOWN", Observation{Protocol: ProtoGRPC, GRPC: &GRPCAnswer{Serving: 3}}, GRPCServiceUnknown},
		{"grpc NOT_FOUND", Observation{Protocol: ProtoGRPC, GRPC: &GRPCAnswer{Code: 5}}, GRPCServiceUnknown},
		{"grpc UNIMPLEMENTED", Observation{Protocol: ProtoGRPC, GRPC: &GRPCAnswer{Code: 12}}, GRPCUnimplemented},
		{"grpc UNAVAILABLE", Observation{Protocol: ProtoGRPC, GRPC: &GRPCAnswer{Code: 14}}, GRPCStatus},
		{"grpc not grpc", Observation{Protocol: ProtoGRPC, GRPC: &GRPCAnswer{NotGRPC: true}}, GRPCProtocol},
		{"grpc no answer", Observation{Protocol: ProtoGRPC}, GRPCProtocol},
		{"grpc to an HTTP/1 server", Observation{Protocol: ProtoGRPC, Err: errors.New("http2: failed reading the frame payload: http2: frame too large, note that the frame header looked like an HTTP/1.1 header"), Stage: StageHeaders}, GRPCProtocol},
		{"grpc EOF before the preface", Observation{Protocol: ProtoGRPC, Err: errors.New("unexpected EOF"), Stage: StageHeaders}, GRPCProtocol},
		{"grpcs without ALPN h2", Observation{Protocol: ProtoGRPC, Err: &net.OpError{Op: "remote error", Err: errors.New("tls: no application protocol")}, Stage: StageTLS}, GRPCProtocol},
		{"grpcs client cert alert", Observation{Protocol: ProtoGRPC, Err: &net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}, Stage: StageHeaders}, TLSRemoteAlert},
		{"grpc reset before the preface", Observation{Protocol: ProtoGRPC, NoPreface: true, Err: read(syscall.ECONNRESET), Stage: StageHeaders}, GRPCProtocol},
		{"grpc reset after the preface", Observation{Protocol: ProtoGRPC, Err: read(syscall.ECONNRESET), Stage: StageHeaders}, ConnReset},
		{"grpcs no h2 selected", Observation{Protocol: ProtoGRPC, Err: fmt.Errorf("x: %w", ErrNoHTTP2), Stage: StageTLS}, GRPCProtocol},
		{"grpc refused", Observation{Protocol: ProtoGRPC, Err: dial(syscall.ECONNREFUSED), Stage: StageConnect}, ConnRefused},
		{"grpc headers window", Observation{Protocol: ProtoGRPC, Err: errors.New("x"), WindowClosed: true, Stage: StageHeaders}, HeadersTimeout},
		{"grpc tls unknown authority", Observation{Protocol: ProtoGRPC, Err: verify(x509.UnknownAuthorityError{}), Stage: StageTLS}, TLSUnknownAuthority},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, r := Classify(c.obs)
			// The outcome is checked against the literal copy of SPEC.md
			// §2 below, not against the code's own table.
			want, ok := specOutcome[c.want]
			if !ok {
				t.Fatalf("%s is not in SPEC.md §2", c.want)
			}
			if r != c.want || o != want {
				t.Errorf("got %s/%s, want %s/%s", o, r, want, c.want)
			}
		})
	}
}

// specOutcome is a literal copy of SPEC.md §2's reasons by outcome.
var specOutcome = map[Reason]Outcome{
	"ok":                     "pass",
	"dns_nxdomain":           "dns",
	"dns_no_address":         "dns",
	"dns_servfail":           "dns",
	"dns_timeout":            "timeout",
	"connect_timeout":        "timeout",
	"tls_handshake_timeout":  "timeout",
	"headers_timeout":        "timeout",
	"body_timeout":           "timeout",
	"conn_refused":           "refused",
	"tls_unknown_authority":  "tls",
	"tls_insecure_algorithm": "tls",
	"tls_hostname_mismatch":  "tls",
	"tls_expired":            "tls",
	"tls_not_yet_valid":      "tls",
	"tls_not_tls":            "tls",
	"tls_remote_alert":       "tls",
	"tls_handshake_failure":  "tls",
	"http_status":            "unreachable",
	"redirect":               "unreachable",
	"condition_failed":       "unreachable",
	"conn_reset":             "unreachable",
	"host_unreachable":       "unreachable",
	"net_unreachable":        "unreachable",
	"protocol_error":         "unreachable",
	"proxy_error":            "unreachable",
	"no_url":                 "unreachable",
	"grpc_not_serving":       "unreachable",
	"grpc_service_unknown":   "unreachable",
	"grpc_unimplemented":     "unreachable",
	"grpc_status":            "unreachable",
	"grpc_protocol":          "unreachable",
	"local_error":            "unknown",
	"resolver_unreachable":   "unknown",
}

// TestReasonOutcomeMatchesSpec compares the code's table with the literal
// copy of SPEC.md §2, both ways.
func TestReasonOutcomeMatchesSpec(t *testing.T) {
	for r, want := range specOutcome {
		if got := r.Outcome(); got != want {
			t.Errorf("%s: code says %s, SPEC.md says %s", r, got, want)
		}
	}
	for _, r := range Reasons {
		if _, ok := specOutcome[r]; !ok {
			t.Errorf("%s is in the code, not in SPEC.md §2", r)
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
		if _, ok := reasonOutcome[r]; !ok {
			t.Errorf("%s has no outcome", r)
		}
	}
	if len(seen) != len(reasonOutcome) {
		t.Errorf("Reasons lists %d, the table has %d", len(seen), len(reasonOutcome))
	}
}

func BenchmarkClassify(b *testing.B) {
	obs := Observation{Err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, Stage: StageConnect}
	for b.Loop() {
		Classify(obs)
	}
}
