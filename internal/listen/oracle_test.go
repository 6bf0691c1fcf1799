//go:build linux

package listen

import (
	"compress/gzip"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/grpcsrv"
	"github.com/healthctl/healthctl/internal/fixture/peers"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

// blackboxBin is Debian's prometheus-blackbox-exporter's program.
const blackboxBin = "prometheus-blackbox-exporter"

// oracleModules are blackbox's http fields, one module each (plus
// Debian's stock modules, appended from testdata), run by both.
const oracleModules = `  follow:
    prober: http
  nofollow:
    prober: http
    http:
      follow_redirects: false
  redirect_ok:
    prober: http
    http:
      valid_status_codes: [302]
      follow_redirects: false
  body_get:
    prober: http
    http:
      body: "x"
  not_down:
    prober: http
    http:
      fail_if_body_matches_regexp: [DOWN]
  up:
    prober: http
    http:
      fail_if_body_not_matches_regexp: [UP]
  not_degraded:
    prober: http
    http:
      fail_if_header_matches: [{header: X-Status, regexp: degraded, allow_missing: true}]
  status_there:
    prober: http
    http:
      fail_if_header_matches: [{header: X-Status, regexp: degraded}]
  missing_ok:
    prober: http
    http:
      fail_if_header_not_matches: [{header: X-Missing, regexp: "yes", allow_missing: true}]
  missing_not_ok:
    prober: http
    http:
      fail_if_header_not_matches: [{header: X-Missing, regexp: "yes"}]
  ssl:
    prober: http
    http:
      fail_if_not_ssl: true
      tls_config: {ca_file: CA}
  no_ssl:
    prober: http
    http:
      fail_if_ssl: true
      tls_config: {ca_file: CA}
  h2:
    prober: http
    http:
      valid_http_versions: [HTTP/2.0]
  h11:
    prober: http
    http:
      valid_http_versions: [HTTP/1.1]
  empty_codes:
    prober: http
    http:
      valid_status_codes: []
  limit:
    prober: http
    http:
      body_size_limit: 1KB
  bearer:
    prober: http
    http:
      bearer_token: t0k
  gzip:
    prober: http
    http:
      compression: gzip
  https:
    prober: http
    http:
      tls_config: {ca_file: CA}
  https_insecure:
    prober: http
    http:
      tls_config: {insecure_skip_verify: true}
  https_tls13:
    prober: http
    http:
      tls_config: {ca_file: CA, min_version: TLS13}
  https_tls12_max:
    prober: http
    http:
      tls_config: {ca_file: CA, max_version: TLS12}
  https_untrusted:
    prober: http
  tcp_plain:
    prober: tcp
  tls_ca:
    prober: tcp
    tcp:
      tls: true
      tls_config: {ca_file: CA}
  grpc_serving:
    prober: grpc
    grpc:
      service: ""
  grpc_down:
    prober: grpc
    grpc:
      service: down
  grpc_unknown:
    prober: grpc
    grpc:
      service: nope
  grpc_tls:
    prober: grpc
    grpc:
      tls: true
      tls_config: {ca_file: GRPCCA}
  grpc_tls_down:
    prober: grpc
    grpc:
      service: down
      tls: true
      tls_config: {ca_file: GRPCCA}
  grpc_tls_unknown:
    prober: grpc
    grpc:
      service: nope
      tls: true
      tls_config: {ca_file: GRPCCA}
  grpc_tls_insecure:
    prober: grpc
    grpc:
      tls: true
      tls_config: {insecure_skip_verify: true}
  grpc_tls_untrusted:
    prober: grpc
    grpc:
      tls: true
  grpc_tls_name:
    prober: grpc
    grpc:
      tls: true
      tls_config: {ca_file: GRPCCA, server_name: app.invalid}
  grpc_tls_wrong_name:
    prober: grpc
    grpc:
      tls: true
      tls_config: {ca_file: GRPCCA, server_name: wrong.example}
  grpc_ip4_only:
    prober: grpc
    grpc:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
  grpc_ip6_only:
    prober: grpc
    grpc:
      preferred_ip_protocol: ip6
      ip_protocol_fallback: false
  grpc_nosection:
    prober: grpc
  oauth:
    prober: http
    http:
      oauth2:
        client_id: healthctl
        client_secret: s3cr3t-client
        token_url: TOKENURL
        scopes: [read, health]
        endpoint_params: {audience: api.invalid}
  oauth_wrong:
    prober: http
    http:
      oauth2: {client_id: healthctl, client_secret: wrong, token_url: TOKENURL}
  proxied:
    prober: http
    http:
      proxy_url: PROXYURL
  icmp4:
    prober: icmp
    icmp:
      preferred_ip_protocol: ip4
      payload_size: 100
  icmp6_only:
    prober: icmp
    icmp:
      preferred_ip_protocol: ip6
      ip_protocol_fallback: false
`

// oracleDifferences are the differences docs/watch.md lists, by module
// and path: the families whose values may differ there.
var oracleDifferences = map[string][]string{
	// blackbox counts 0 bytes of a body it could not decode; healthctl
	// the bytes it read.
	"gzip /big": {"probe_http_uncompressed_body_length"},
	// A grpc module without a grpc: section: blackbox 0.23 applies its
	// grpc defaults only with the section, so it has no IP fallback and
	// fails an IPv4 address before dialling; healthctl applies the
	// documented default, ip_protocol_fallback: true (docs/watch.md).
	"grpc_nosection ": {"all"},
	// A token the endpoint refused: blackbox's client fails before any
	// answer (its http families at 0); healthctl answers without
	// probing (healthctl_probe_not_started{why="oauth2_token"}): the
	// same probe_success 0, no http families (docs/watch.md).
	"oauth_wrong /oauth": {"success"},
}

// oraclePasses are modules whose cases are there to pass: the token, the
// proxy, the echo, the health answer really worked in blackbox too.
var oraclePasses = map[string]bool{"oauth": true, "proxied": true, "icmp_ttl5": true, "grpc_tls_insecure": true, "grpc_ip4_only": true}

// oracleSkipped are the families whose values are the run's own.
var oracleSkipped = map[string]bool{
	// Timings are the run's own.
	"probe_duration_seconds": true, "probe_dns_lookup_time_seconds": true,
}

// oracleTimings are the families of phase timings: their labels (the
// phases listed) are compared, not their values.
var oracleTimings = map[string]bool{"probe_http_duration_seconds": true, "probe_grpc_duration_seconds": true, "probe_icmp_duration_seconds": true}

// TestBlackboxOracle runs Debian's blackbox_exporter beside the listener
// on the same module file against the same loopback servers and compares
// every probe_success and every series both answer (timings aside): the
// oracle for /probe's semantics. Only with HEALTHCTL_STACKS=1.
func TestBlackboxOracle(t *testing.T) {
	stackfix.Require(t, "", blackboxBin)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "UP") })
	mux.HandleFunc("/redir", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/getonly", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
	mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "status: DOWN") })
	mux.HandleFunc("/degraded", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Status", "degraded") })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 2048)) })
	mux.HandleFunc("/gz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write(make([]byte, 3000))
		zw.Close()
	})
	mux.HandleFunc("/nocontent", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/lm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Last-Modified", "Sun, 06 Dec 2026 03:00:00 GMT")
		io.WriteString(w, "UP")
	})
	mux.HandleFunc("/oauth", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer tok-") {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	mux.HandleFunc("/auth", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	plain := httptest.NewServer(mux)
	defer plain.Close()
	tlsSrv := httptest.NewUnstartedServer(mux)
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()

	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	debian, err := os.ReadFile(filepath.Join("testdata", "debian-blackbox.yml"))
	if err != nil {
		t.Fatal(err)
	}
	pki, err := pkifix.NewPKI(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	tokens := peers.NewTokenServer(t, "healthctl", "s3cr3t-client")
	// A proxy that answers every request itself: a probe through it
	// passes, one past it finds nothing listening.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "UP via the proxy") }))
	defer proxy.Close()
	yml := string(debian) + "\n" + strings.NewReplacer("GRPCCA", pki.CAFile, "CA", ca, "TOKENURL", tokens.URL, "PROXYURL", proxy.URL).Replace(oracleModules)
	cfg := filepath.Join(dir, "blackbox.yml")
	if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	mods, err := blackbox.ReadModules(cfg, target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := ParseAllow([]string{"127.0.0.1", "::1"})
	blackbox.BindAllow(mods, allow.Permits)
	ours := New(Config{Interval: time.Minute, Probe: probe.Run, Modules: mods, Allow: allow}).Handler()
	oursHandler := ours

	port, err := fixture.UnusedPort()
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := exec.LookPath(blackboxBin)
	if !stackfix.StartDaemon(t, stackfix.Daemon{Name: "blackbox_exporter", Dir: dir, Ports: []int{port}, Prog: bin,
		Args: []string{"--config.file=" + cfg, "--web.listen-address=127.0.0.1:" + strconv.Itoa(port)}}) {
		return
	}
	bb := "http://127.0.0.1:" + strconv.Itoa(port)

	banner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer banner.Close()
	go func() {
		for {
			c, err := banner.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
				// Whatever the client says is read before the close
				// (no RST for unread lines): an EOF for both, never a
				// reset for one.
				c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				io.Copy(io.Discard, c)
			}()
		}
	}()
	// grpc-go's own health server, in cleartext and over TLS.
	gplain, err := grpcsrv.Start(t, grpcsrv.Options{Services: map[string]string{"down": "NOT_SERVING", "service1": "SERVING"}})
	if err != nil {
		t.Fatal(err)
	}
	gnone, err := grpcsrv.Start(t, grpcsrv.Options{NoHealth: true})
	if err != nil {
		t.Fatal(err)
	}
	good, err := pki.ServerCertificate(pkifix.CertGood)
	if err != nil {
		t.Fatal(err)
	}
	gtls, err := grpcsrv.Start(t, grpcsrv.Options{Services: map[string]string{"down": "NOT_SERVING"},
		TLS: &tls.Config{Certificates: []tls.Certificate{good}}})
	if err != nil {
		t.Fatal(err)
	}
	g, gs, gn := gplain.Addr, gtls.Addr, gnone.Addr
	p, s := plain.URL, tlsSrv.URL
	cases := []struct{ module, target string }{
		{"http_2xx", p + "/ok"}, {"http_2xx", p + "/redir"}, {"http_2xx", p + "/nocontent"}, {"http_2xx", p + "/lm"},
		{"http_2xx", "http://127.0.0.1:1/"}, {"http_post_2xx", p + "/getonly"}, {"http_post_2xx", p + "/ok"},
		{"tcp_connect", strings.TrimPrefix(p, "http://")}, {"tcp_connect", "127.0.0.1:1"},
		{"follow", p + "/redir"}, {"nofollow", p + "/redir"}, {"redirect_ok", p + "/redir"},
		{"body_get", p + "/getonly"}, {"not_down", p + "/ok"}, {"not_down", p + "/down"}, {"up", p + "/ok"}, {"up", p + "/down"},
		{"not_degraded", p + "/degraded"}, {"not_degraded", p + "/ok"}, {"status_there", p + "/ok"}, {"status_there", p + "/degraded"},
		{"missing_ok", p + "/ok"}, {"missing_not_ok", p + "/ok"},
		{"ssl", p + "/ok"}, {"ssl", s + "/ok"}, {"no_ssl", p + "/ok"}, {"no_ssl", s + "/ok"},
		{"h2", p + "/ok"}, {"h2", s + "/ok"}, {"h11", p + "/ok"}, {"h11", s + "/ok"}, {"empty_codes", p + "/nocontent"},
		{"limit", p + "/ok"}, {"limit", p + "/big"}, {"bearer", p + "/auth"}, {"http_2xx", p + "/auth"}, {"gzip", p + "/big"}, {"gzip", p + "/gz"}, {"http_2xx", p + "/gz"},
		{"https", s + "/ok"}, {"https_insecure", s + "/ok"}, {"https_tls13", s + "/ok"}, {"https_tls12_max", s + "/ok"},
		{"https_untrusted", s + "/ok"},
		{"oauth", p + "/oauth"}, {"oauth_wrong", p + "/oauth"}, {"http_2xx", p + "/oauth"},
		{"proxied", "http://127.0.0.1:1/x"},
		{"icmp", "127.0.0.1"}, {"icmp_ttl5", "127.0.0.1"}, {"icmp", "::1"}, {"icmp4", "127.0.0.1"}, {"icmp6_only", "127.0.0.1"},
		{"ssh_banner", banner.Addr().String()}, {"irc_banner", banner.Addr().String()},
		{"ssh_banner", strings.TrimPrefix(p, "http://")},
		{"tcp_plain", strings.TrimPrefix(s, "https://")}, {"tls_ca", strings.TrimPrefix(s, "https://")},
		{"grpc_serving", g}, {"grpc_down", g}, {"grpc_unknown", g}, {"grpc_serving", gn}, {"grpc_serving", "127.0.0.1:1"},
		{"grpc_serving", gs}, {"grpc_plain", g}, {"grpc_plain", gn}, {"grpc", gs}, {"grpc", g}, {"grpc_tls", g}, {"grpc_tls", gs}, {"grpc_tls_down", gs}, {"grpc_tls_unknown", gs},
		{"grpc_tls_insecure", gs}, {"grpc_tls_untrusted", gs}, {"grpc_tls_name", gs}, {"grpc_tls_wrong_name", gs},
		{"grpc_ip4_only", g}, {"grpc_ip6_only", g}, {"grpc_nosection", g},
		// An HTTP/1.1 server is no gRPC server: UNAVAILABLE in both.
		{"grpc_serving", strings.TrimPrefix(p, "http://")},
	}
	for _, c := range cases {
		q := "/probe?module=" + c.module + "&target=" + url.QueryEscape(c.target)
		theirBody := httpGet(t, bb+q)
		path := ""
		if u, err := url.Parse(c.target); err == nil {
			path = u.Path
		}
		allowed := oracleDifferences[c.module+" "+path]
		if slices.Contains(allowed, "success") {
			ours := httptest.NewRecorder()
			req := httptest.NewRequest("GET", q, nil)
			req.Header.Set(ScrapeTimeoutHeader, "3")
			h := ours
			oursHandler.ServeHTTP(h, req)
			a, b := samples(parseFams(t, h.Body.String())["probe_success"]), samples(parseFams(t, theirBody)["probe_success"])
			if a != b {
				t.Errorf("%s %s: probe_success: healthctl %s, blackbox %s", c.module, c.target, a, b)
			}
			continue
		}
		if slices.Contains(allowed, "all") {
			t.Logf("%s %s: a documented difference in every family; blackbox says\n%s", c.module, c.target, theirBody)
			continue
		}
		// Both get Prometheus's scrape timeout: a banner that never
		// comes ends both probes at 2.5 s, not blackbox's 119.5.
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", q, nil)
		req.Header.Set(ScrapeTimeoutHeader, "3")
		ours.ServeHTTP(rec, req)
		code, ourBody := rec.Code, rec.Body.String()
		if code != 200 {
			t.Errorf("%s %s: healthctl %d %s", c.module, c.target, code, ourBody)
			continue
		}
		ourFams, theirFams := parseFams(t, ourBody), parseFams(t, theirBody)
		if oraclePasses[c.module] && samples(theirFams["probe_success"]) != "{} 1" {
			t.Errorf("%s %s: blackbox did not pass, which the case is for:\n%s", c.module, c.target, theirBody)
		}
		var diffs []string
		for name, theirs := range theirFams {
			if oracleSkipped[name] || slices.Contains(allowed, name) {
				continue
			}
			o, ok := ourFams[name]
			if !ok {
				diffs = append(diffs, "missing "+name)
				continue
			}
			if oracleTimings[name] {
				if a, b := labelSets(o), labelSets(theirs); a != b {
					diffs = append(diffs, fmt.Sprintf("%s: healthctl %s, blackbox %s", name, a, b))
				}
				continue
			}
			if a, b := samples(o), samples(theirs); a != b {
				diffs = append(diffs, fmt.Sprintf("%s: healthctl %s, blackbox %s", name, a, b))
			}
		}
		for name := range ourFams {
			if _, ok := theirFams[name]; !ok && !strings.HasPrefix(name, "healthctl_") {
				diffs = append(diffs, "extra "+name)
			}
		}
		sort.Strings(diffs)
		if len(diffs) > 0 {
			t.Errorf("%s %s:\n  %s", c.module, c.target, strings.Join(diffs, "\n  "))
		}
	}
}

func httpGet(t *testing.T, u string) string {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set(ScrapeTimeoutHeader, "3")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func parseFams(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	f, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return f
}

// labelSets is a family's label sets as text, sorted (values aside).
func labelSets(f *dto.MetricFamily) string {
	var out []string
	for _, m := range f.Metric {
		var l []string
		for _, lp := range m.Label {
			l = append(l, lp.GetName()+"="+strconv.Quote(lp.GetValue()))
		}
		out = append(out, "{"+strings.Join(l, ",")+"}")
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// samples is a family's samples as text, sorted: labels and value.
func samples(f *dto.MetricFamily) string {
	var out []string
	for _, m := range f.Metric {
		var l []string
		for _, lp := range m.Label {
			l = append(l, lp.GetName()+"="+strconv.Quote(lp.GetValue()))
		}
		out = append(out, "{"+strings.Join(l, ",")+"} "+strconv.FormatFloat(m.GetGauge().GetValue(), 'g', -1, 64))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}
