package metrics

import (
	"bufio"
	"io"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
)

// WriteProbe writes the exposition of one /probe answer (watch --listen's
// blackbox_exporter multi-target endpoint) of a probe by prober (http,
// tcp or grpc: blackbox's): blackbox's probe_* names with no target label
// (Prometheus adds instance and job from the scrape, as it does for
// blackbox), and healthctl_probe_outcome with the outcome and the reason,
// which blackbox leaves to its logs. The families are those of blackbox's
// prober that healthctl measures: probe_http_* only for the http prober
// (a tcp probe's probe_http_status_code 0 would fire an alert on
// probe_http_status_code <= 199 for a passing target); a family whose
// fact the probe did not reach has no sample (a phase not reached is
// absent, not 0).
func WriteProbe(w io.Writer, prober string, r *probe.Result) error {
	b := bufio.NewWriter(w)
	m := &metricWriter{b: b}
	m.family("probe_success", "gauge", "Displays whether or not the probe was a success")
	m.sample("probe_success", boolf(r.Outcome == classify.Pass))
	m.family("probe_duration_seconds", "gauge", "Returns how long the probe took to complete in seconds")
	m.sample("probe_duration_seconds", r.Timings.Of(probe.PhaseTotal).Seconds())
	if d, ok := r.Timings.Get(probe.PhaseDNS); ok {
		m.family("probe_dns_lookup_time_seconds", "gauge", "Returns the time taken for probe dns lookup in seconds")
		m.sample("probe_dns_lookup_time_seconds", d.Seconds())
	}
	if r.IPFamily != 0 {
		m.family("probe_ip_protocol", "gauge", "Specifies whether probe ip protocol is IP4 or IP6")
		m.sample("probe_ip_protocol", float64(r.IPFamily))
	}
	if prober == "http" {
		writeHTTP(m, r)
	}
	if at, ok := earliestExpiry(r); ok {
		m.family("probe_ssl_earliest_cert_expiry", "gauge", "Returns last SSL chain expiry in unixtime")
		m.sample("probe_ssl_earliest_cert_expiry", float64(at.Unix()))
	}
	if r.TLS != nil && r.TLS.Version != "" {
		m.family("probe_tls_version_info", "gauge", "Returns the TLS version used or NaN when unknown")
		m.sample("probe_tls_version_info", 1, "version", r.TLS.Version)
	}
	if prober == "http" || prober == "tcp" {
		// blackbox's http and tcp probers always have it (tcp's for
		// query_response); its grpc prober has none.
		m.family("probe_failed_due_to_regex", "gauge", "Indicates if probe failed due to regex")
		m.sample("probe_failed_due_to_regex", boolf(r.Reason == classify.ConditionFailed))
	}
	m.family("healthctl_probe_outcome", "gauge", "The probe's outcome and reason (always 1; reasons are a closed set, see docs/outcomes.md).")
	m.sample("healthctl_probe_outcome", 1, "outcome", string(r.Outcome), "reason", string(r.Reason))
	return b.Flush()
}

// writeHTTP writes the http prober's own families.
func writeHTTP(m *metricWriter, r *probe.Result) {
	m.family("probe_http_status_code", "gauge", "Response HTTP status code")
	m.sample("probe_http_status_code", float64(r.HTTPStatus))
	if v, ok := httpVersion(r.HTTPVersion); ok {
		m.family("probe_http_version", "gauge", "Returns the version of HTTP of the probe response")
		m.sample("probe_http_version", v)
	}
	m.family("probe_http_redirects", "gauge", "The number of redirects")
	m.sample("probe_http_redirects", float64(len(r.Hops)))
	m.family("probe_http_ssl", "gauge", "Indicates if SSL was used for the final redirect")
	m.sample("probe_http_ssl", boolf(r.TLS != nil && r.TLS.Version != ""))
	m.family("probe_http_duration_seconds", "gauge", "Duration of http request by phase, summed over all redirects")
	for _, p := range blackboxPhase {
		if d, ok := r.Timings.Get(p.ph); ok {
			m.sample("probe_http_duration_seconds", d.Seconds(), "phase", p.label)
		}
	}
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
