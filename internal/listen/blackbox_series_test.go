package listen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

// blackboxHTTPSeries are the families blackbox_exporter 0.23 (Debian's
// prometheus-blackbox-exporter) answers for an http_2xx module over plain
// HTTP, as it answered a loopback server; blackboxTLSSeries the families
// an https target adds.
var (
	blackboxHTTPSeries = []string{
		"probe_dns_lookup_time_seconds", "probe_duration_seconds", "probe_failed_due_to_regex",
		"probe_http_content_length", "probe_http_duration_seconds", "probe_http_redirects", "probe_http_ssl",
		"probe_http_status_code", "probe_http_uncompressed_body_length", "probe_http_version",
		"probe_ip_addr_hash", "probe_ip_protocol", "probe_success",
	}
	blackboxTLSSeries = []string{
		"probe_ssl_earliest_cert_expiry", "probe_ssl_last_chain_expiry_timestamp_seconds",
		"probe_ssl_last_chain_info", "probe_tls_version_info",
	}
)

// families are the probe_* family names of an exposition, with every
// sample line kept by name.
func families(body string) (names []string, samples map[string][]string) {
	samples = map[string][]string{}
	for _, l := range strings.Split(body, "\n") {
		if l == "" || strings.HasPrefix(l, "#") || !strings.HasPrefix(l, "probe_") {
			continue
		}
		name := l[:strings.IndexAny(l, "{ ")]
		if _, ok := samples[name]; !ok {
			names = append(names, name)
		}
		samples[name] = append(samples[name], l)
	}
	slices.Sort(names)
	return names, samples
}

// TestSeriesAsBlackbox: an http module's answer has the families
// blackbox's answer has, every phase of probe_http_duration_seconds, and
// the values blackbox gives the facts both see (the address hash of
// 127.0.0.1 blackbox answered, the leaf's fingerprint).
func TestSeriesAsBlackbox(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/lm" {
			w.Header().Set("Last-Modified", "Sun, 06 Dec 2026 03:00:00 GMT")
		}
		io.WriteString(w, "hello")
	}))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer tlsSrv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	yml := "modules:\n  http_2xx:\n    prober: http\n  https:\n    prober: http\n    http:\n      tls_config: {ca_file: " + ca + "}\n" +
		"  insecure:\n    prober: http\n    http:\n      tls_config: {insecure_skip_verify: true}\n"
	mods, err := blackbox.ParseModules(filepath.Join(dir, "bb.yml"), []byte(yml), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	blackbox.BindAllow(mods, allow.Permits)
	h := New(Config{Interval: time.Minute, Probe: probe.Run, Modules: mods, Allow: allow}).Handler()
	fp := sha256.Sum256(tlsSrv.Certificate().Raw)
	for _, c := range []struct {
		module, target string
		want           []string
		values         []string
	}{
		{"http_2xx", plain.URL, blackboxHTTPSeries, []string{"probe_success 1", "probe_ip_addr_hash 3.668918509e+09", "probe_ip_protocol 4",
			"probe_http_content_length 5", "probe_http_uncompressed_body_length 5", "probe_http_redirects 0", "probe_http_version 1.1", "probe_http_ssl 0",
			`probe_http_duration_seconds{phase="tls"} 0`}},
		{"http_2xx", plain.URL + "/lm", append(slices.Clone(blackboxHTTPSeries), "probe_http_last_modified_timestamp_seconds"),
			[]string{"probe_http_last_modified_timestamp_seconds 1.796526e+09"}},
		// Nothing answers: every http family still, at 0.
		{"http_2xx", "http://127.0.0.1:1/", blackboxHTTPSeries, []string{"probe_success 0", "probe_http_status_code 0", "probe_http_version 0",
			`probe_http_duration_seconds{phase="transfer"} 0`}},
		{"https", tlsSrv.URL, append(slices.Clone(blackboxHTTPSeries), blackboxTLSSeries...), []string{"probe_success 1", "probe_http_ssl 1",
			`probe_ssl_last_chain_info{fingerprint_sha256="` + hex.EncodeToString(fp[:]) + `",issuer="O=Acme Co",subject="O=Acme Co",subjectalternative="example.com,*.example.com"} 1`}},
		// A chain that fails verification: blackbox has no answer, so
		// no TLS family and probe_http_ssl 0.
		{"http_2xx", tlsSrv.URL, blackboxHTTPSeries, []string{"probe_success 0", "probe_http_ssl 0"}},
		{"insecure", tlsSrv.URL, append(slices.Clone(blackboxHTTPSeries), blackboxTLSSeries...), []string{"probe_success 1",
			"probe_ssl_last_chain_expiry_timestamp_seconds -6.21355968e+10"}},
	} {
		code, body := get(t, h, "/probe?module="+c.module+"&target="+url.QueryEscape(c.target))
		if code != 200 {
			t.Fatalf("%s: %d %s", c.module, code, body)
		}
		checkExposition(t, body)
		names, samples := families(body)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("%s %s: families\n%v\nwant blackbox's\n%v", c.module, c.target, names, want)
		}
		if n := len(samples["probe_http_duration_seconds"]); n != 5 {
			t.Errorf("%s %s: %d phases, want blackbox's five", c.module, c.target, n)
		}
		for _, v := range c.values {
			if !strings.Contains(body, "\n"+v+"\n") {
				t.Errorf("%s %s: no %q\n%s", c.module, c.target, v, body)
			}
		}
	}
}
