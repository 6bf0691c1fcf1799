package metrics

import (
	"bufio"
	"encoding/hex"
	"hash/fnv"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// WriteProbe writes the exposition of one /probe answer (watch --listen's
// blackbox_exporter multi-target endpoint) of a probe by prober (http,
// tcp or grpc: blackbox's): blackbox's probe_* names with no target label
// (Prometheus adds instance and job from the scrape, as it does for
// blackbox), and healthctl_probe_outcome with the outcome and the reason,
// which blackbox leaves to its logs. The families are those blackbox's
// prober emits, as it emits them: the address's (DNS lookup time, IP
// protocol, address hash) for every prober, 0 when the probe did not get
// that far; probe_http_* only for the http prober, every one of them
// always (a phase not reached is 0, as in blackbox), never for another (a
// tcp probe's probe_http_status_code 0 would fire an alert on
// probe_http_status_code <= 199 for a passing target); the TLS families
// when a handshake was made.
func WriteProbe(w io.Writer, prober string, r *probe.Result) error {
	b := bufio.NewWriter(w)
	m := &metricWriter{b: b}
	writeCommon(m, r)
	row, _ := scheme.ProberRow(prober)
	switch {
	case row.Options&scheme.AppliesRequest != 0: // http
		writeHTTP(m, r)
		writeTLS(m, r)
	case row.Options&scheme.AppliesGRPCService != 0: // grpc
		writeGRPC(m, r)
	default:
		writeTLS(m, r)
	}
	if s, ok := r.Answer.(kindSeries); ok {
		// A kind's own families (blackbox's probe_dns_*), as its
		// answer lists them: one family's samples together.
		last := ""
		s.Series(func(name, help string, v float64, labels ...string) {
			if name != last {
				m.family(name, "gauge", help)
				last = name
			}
			m.sample(name, v, labels...)
		})
	}
	if prober == "http" || prober == "tcp" {
		// blackbox's http and tcp probers always have it (tcp's for
		// query_response); its grpc prober has none.
		m.family("probe_failed_due_to_regex", "gauge", "Indicates if probe failed due to regex")
		m.sample("probe_failed_due_to_regex", boolf(r.Reason == classify.ConditionFailed && !r.AnswerConditionFailed))
	}
	m.family("healthctl_probe_outcome", "gauge", "The probe's outcome and reason (always 1; reasons are a closed set, see docs/outcomes.md).")
	m.sample("healthctl_probe_outcome", 1, "outcome", string(r.Outcome), "reason", string(r.Reason))
	return b.Flush()
}

// kindSeries is a kind's answer with series of its own for /probe
// (blackbox's prober-specific families): emit writes one gauge sample.
type kindSeries interface {
	Series(emit func(name, help string, value float64, labels ...string))
}

// writeCommon writes the families every blackbox prober writes first:
// success, duration, the lookup's time and the address's family and hash.
func writeCommon(m *metricWriter, r *probe.Result) {
	m.family("probe_success", "gauge", "Displays whether or not the probe was a success")
	m.sample("probe_success", boolf(r.Outcome == classify.Pass))
	m.family("probe_duration_seconds", "gauge", "Returns how long the probe took to complete in seconds")
	m.sample("probe_duration_seconds", r.Timings.Of(probe.PhaseTotal).Seconds())
	m.family("probe_dns_lookup_time_seconds", "gauge", "Returns the time taken for probe dns lookup in seconds")
	m.sample("probe_dns_lookup_time_seconds", r.Timings.Of(probe.PhaseDNS).Seconds())
	m.family("probe_ip_protocol", "gauge", "Specifies whether probe ip protocol is IP4 or IP6")
	m.sample("probe_ip_protocol", float64(r.IPFamily))
	m.family("probe_ip_addr_hash", "gauge", "Specifies the hash of IP address. It's useful to detect if the IP address changes.")
	m.sample("probe_ip_addr_hash", float64(AddrHash(r.Address)))
}

// GRPCAnswer is what a gRPC health answer tells the grpc prober's series
// (the gRPC kind's answer implements it; the series ask through it, not
// the kind's type).
type GRPCAnswer interface {
	// HealthStatus is the serving status's name ("SERVING"), "" when no
	// response message came.
	HealthStatus() string
	// ClientCode is the call's status code as grpc-go's client reports it
	// (blackbox's probe_grpc_status_code).
	ClientCode() int
}

// writeGRPC writes blackbox's grpc prober's families as it writes them:
// before the address is resolved only the resolve phase, probe_grpc_ssl,
// probe_grpc_status_code and probe_ssl_earliest_cert_expiry (0); once it
// is, the check phase and probe_grpc_healthcheck_response for every
// status. Its TLS families come only with a health answer (blackbox reads
// them from the answered call's peer: a call that ended in a non-OK
// status has none, and says probe_grpc_ssl 0), and never
// probe_ssl_last_chain_expiry_timestamp_seconds.
func writeGRPC(m *metricWriter, r *probe.Result) {
	resolved := r.Address != ""
	g, _ := r.Answer.(GRPCAnswer)
	serving, code := "", 0
	switch {
	case g != nil:
		serving, code = g.HealthStatus(), g.ClientCode()
	case resolved:
		code = 14 // UNAVAILABLE: no call was made on a connection
	}
	m.family("probe_grpc_duration_seconds", "gauge", "Duration of gRPC request by phase")
	if resolved {
		dns := r.Timings.Of(probe.PhaseDNS)
		m.sample("probe_grpc_duration_seconds", max(r.Timings.Of(probe.PhaseTotal)-dns, 0).Seconds(), "phase", "check")
	}
	m.sample("probe_grpc_duration_seconds", r.Timings.Of(probe.PhaseDNS).Seconds(), "phase", "resolve")
	if resolved {
		m.family("probe_grpc_healthcheck_response", "gauge", "Response HealthCheck response")
		for _, s := range grpcStatuses {
			m.sample("probe_grpc_healthcheck_response", boolf(s == serving), "serving_status", s)
		}
		if serving != "" && !slices.Contains(grpcStatuses, serving) {
			m.sample("probe_grpc_healthcheck_response", 1, "serving_status", serving)
		}
	}
	tlsInfo := serving != "" && handshook(r)
	m.family("probe_grpc_ssl", "gauge", "Indicates if SSL was used for the connection")
	m.sample("probe_grpc_ssl", boolf(tlsInfo))
	m.family("probe_grpc_status_code", "gauge", "Response gRPC status code")
	m.sample("probe_grpc_status_code", float64(code))
	expiry := 0.0
	if at, ok := earliestExpiry(r); ok && tlsInfo {
		expiry = float64(at.Unix())
	}
	m.family("probe_ssl_earliest_cert_expiry", "gauge", "Returns last SSL chain expiry in unixtime")
	m.sample("probe_ssl_earliest_cert_expiry", expiry)
	if tlsInfo {
		writeLeaf(m, r)
		m.family("probe_tls_version_info", "gauge", "Returns the TLS version used or NaN when unknown")
		m.sample("probe_tls_version_info", 1, "version", r.TLS.Version)
	}
}

// AddrHash is blackbox's probe_ip_addr_hash of an address ("host:port" or
// an address alone): FNV-1a (32 bits) of the address's bytes, 4 for IPv4
// and 16 for IPv6; 0 without an address.
func AddrHash(address string) uint32 {
	host := address
	if h, _, err := net.SplitHostPort(address); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return 0
	}
	a = a.Unmap().WithZone("")
	h := fnv.New32a()
	h.Write(a.AsSlice())
	return h.Sum32()
}

// writeHTTP writes the http prober's own families, every one, as
// blackbox does (0 for what the probe did not reach).
func writeHTTP(m *metricWriter, r *probe.Result) {
	m.family("probe_http_status_code", "gauge", "Response HTTP status code")
	m.sample("probe_http_status_code", float64(r.HTTPStatus))
	m.family("probe_http_content_length", "gauge", "Length of http content response")
	m.sample("probe_http_content_length", float64(r.ContentLength))
	// A redirect offered and not followed counts as one, and its body
	// is not read: blackbox's client stops at it with an error.
	redirects, bodyRead := len(r.Hops), r.BodyRead
	if r.Redirect != nil && !r.Redirect.Invalid && followable(r.HTTPStatus) {
		redirects, bodyRead = redirects+1, 0
	}
	m.family("probe_http_uncompressed_body_length", "gauge", "Length of uncompressed response body")
	m.sample("probe_http_uncompressed_body_length", float64(bodyRead))
	v, _ := httpVersion(r.HTTPVersion)
	m.family("probe_http_version", "gauge", "Returns the version of HTTP of the probe response")
	m.sample("probe_http_version", v)
	m.family("probe_http_redirects", "gauge", "The number of redirects")
	m.sample("probe_http_redirects", float64(redirects))
	m.family("probe_http_ssl", "gauge", "Indicates if SSL was used for the final redirect")
	m.sample("probe_http_ssl", boolf(r.HTTPStatus != 0 && handshook(r)))
	if !r.LastModified.IsZero() {
		m.family("probe_http_last_modified_timestamp_seconds", "gauge", "Returns the Last-Modified HTTP response header in unixtime")
		m.sample("probe_http_last_modified_timestamp_seconds", float64(r.LastModified.Unix()))
	}
	m.family("probe_http_duration_seconds", "gauge", "Duration of http request by phase, summed over all redirects")
	for _, p := range blackboxPhase {
		m.sample("probe_http_duration_seconds", r.Timings.Of(p.ph).Seconds(), "phase", p.label)
	}
}

// followable is whether Go's HTTP client (blackbox's) follows a status.
func followable(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// handshook: a TLS handshake was completed (verified, or verification
// off). One whose verification failed has no answer in blackbox, and so
// none of its TLS families.
func handshook(r *probe.Result) bool {
	return r.TLS != nil && r.TLS.Version != "" && (r.TLS.Verified || r.TLS.NotVerified != "")
}

// writeTLS writes the TLS families of a probe that made a handshake:
// the earliest expiry of the chain presented, the last chain's (when it
// was verified), the leaf's identity and the version.
func writeTLS(m *metricWriter, r *probe.Result) {
	if !handshook(r) {
		return
	}
	if at, ok := earliestExpiry(r); ok {
		m.family("probe_ssl_earliest_cert_expiry", "gauge", "Returns last SSL chain expiry in unixtime")
		m.sample("probe_ssl_earliest_cert_expiry", float64(at.Unix()))
		last := at.Unix()
		if !r.TLS.Verified {
			// Verification off: blackbox has no verified chain, and
			// says year 1 (Go's zero time), which is kept so that
			// both answer alike.
			last = time.Time{}.Unix()
		}
		m.family("probe_ssl_last_chain_expiry_timestamp_seconds", "gauge", "Returns last SSL chain expiry in timestamp")
		m.sample("probe_ssl_last_chain_expiry_timestamp_seconds", float64(last))
		writeLeaf(m, r)
	}
	m.family("probe_tls_version_info", "gauge", "Returns the TLS version used or NaN when unknown")
	m.sample("probe_tls_version_info", 1, "version", r.TLS.Version)
}

// writeLeaf writes probe_ssl_last_chain_info, the leaf's identity (a
// chain was presented).
func writeLeaf(m *metricWriter, r *probe.Result) {
	if r.TLS == nil || len(r.TLS.Chain) == 0 {
		return
	}
	leaf := r.TLS.Chain[0]
	m.family("probe_ssl_last_chain_info", "gauge", "Contains SSL leaf certificate information")
	m.sample("probe_ssl_last_chain_info", 1, "fingerprint_sha256", hex.EncodeToString(leaf.SHA256[:]),
		"issuer", leaf.Issuer, "subject", leaf.Subject, "subjectalternative", strings.Join(leaf.SANs[:min(leaf.DNSNames, len(leaf.SANs))], ","))
}

// earliestExpiry is the earliest NotAfter of the presented chain.
func earliestExpiry(r *probe.Result) (time.Time, bool) {
	if r.TLS == nil || len(r.TLS.Chain) == 0 {
		return time.Time{}, false
	}
	earliest := r.TLS.Chain[0].NotAfter
	for _, c := range r.TLS.Chain[1:] {
		if c.NotAfter.Before(earliest) {
			earliest = c.NotAfter
		}
	}
	return earliest, true
}

// httpVersion is blackbox's probe_http_version value of a response's
// protocol ("HTTP/1.1" → 1.1, "HTTP/2.0" → 2).
func httpVersion(v string) (float64, bool) {
	switch v {
	case "HTTP/1.0":
		return 1.0, true
	case "HTTP/1.1":
		return 1.1, true
	case "HTTP/2", "HTTP/2.0":
		return 2, true
	case "HTTP/3", "HTTP/3.0":
		return 3, true
	}
	return 0, false
}
