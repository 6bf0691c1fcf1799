package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
)

// The real servers of the curl differential test, each from Debian
// (.ci/deps/curl-trust.sh), each started by the test on 127.0.0.1 ports
// with a configuration generated in its directory, in the foreground, in a
// process group of its own that the test kills when it ends. None of them
// is ever told an address off loopback: unbound answers from local zones
// only and forwards anything else to a closed loopback port; squid is only
// ever asked for 127.0.0.1.

// stackCases starts every real server installed here and returns its cases.
// A server that is not installed is skipped outside CI and fails in CI.
func stackCases(t *testing.T, dir string, pki *pkifix.PKI) []diffCase {
	good, err := pki.ServerCertificate(pkifix.CertGood)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := pki.WriteServerFiles("server", good)
	if err != nil {
		t.Fatal(err)
	}
	st := &stacks{t: t, dir: dir, pki: pki, cert: certFile, key: keyFile}
	// Each stack starts under a recorder of its own: one that is missing
	// or does not come up fails (or skips) its own subtest, not the test.
	group := func(name string) *groupTB {
		g := &groupTB{T: t}
		stackGroups.Store(name, g)
		st.t = g
		return g
	}
	ok, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st.okPort = ok.Port
	tlsOK, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{TLS: fixture.TLSGood, PKI: pki})
	if err != nil {
		t.Fatal(err)
	}
	st.tlsPort = tlsOK.Port
	closed, err := fixture.NewClosedPort(t)
	if err != nil {
		t.Fatal(err)
	}
	st.closedPort = closed.Port
	hang, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Mode: fixture.ModeHang})
	if err != nil {
		t.Fatal(err)
	}
	st.hangPort = hang.Port
	// An upstream that promises 4 KiB more body than it sends, then
	// resets: the front (nginx) has passed its Content-Length on, and
	// ends the answer short.
	reset, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Mode: fixture.ModeReset, Body: "partial"})
	if err != nil {
		t.Fatal(err)
	}
	st.resetPort = reset.Port

	var cases []diffCase
	for _, s := range []struct {
		name, prog string
		start      func() []diffCase
	}{
		{"nginx", "nginx", st.nginx},
		{"haproxy", "haproxy", st.haproxy},
		{"caddy", "caddy", st.caddy},
		{"apache", "apache2", st.apache},
		{"unbound", "unbound", st.unbound},
		{"squid", "squid", st.squid},
		{"nghttpd", "nghttpd", st.nghttpd},
	} {
		g := group(s.name)
		if !stackfix.Installed(g, s.prog, "") {
			skippedStacks.Store(s.name, true)
			continue
		}
		more := s.start()
		if g.Failed() {
			skippedStacks.Store(s.name, true)
		}
		cases = append(cases, more...)
	}
	st.t = t
	// The application stacks of drain-test's differential test: a
	// framework's own server answering its health route and its own 404.
	for _, app := range stackfix.AppStacks {
		port, ok := app.Start(group(app.Name), filepath.Join("..", "..", "testdata", "stacks"), dir)
		st.t = t
		if !ok {
			skippedStacks.Store(app.Name, true)
			continue
		}
		// Its /status: JSON with a header of the app's, X-Check sent
		// twice (testdata/stacks).
		status := local(port, "/status")
		cases = append(cases, diffCase{name: app.Name + "/live", url: local(port, "/live")},
			diffCase{name: app.Name + "/404", url: local(port, "/missing")},
			diffCase{name: app.Name + "/json-header-holds", url: status,
				expectJSON: []string{"status=ready", "checks.db=ok", "version=3"}, expectHeader: []string{"x-app-status=^ready$", "X-Check=^second$"}},
			diffCase{name: app.Name + "/json-differs", url: status, expectJSON: []string{"checks.db=down"}},
			diffCase{name: app.Name + "/header-missing", url: status, expectJSON: []string{"status=ready"}, expectHeader: []string{"X-Absent=."}})
	}
	return cases
}

type stacks struct {
	t                                     testing.TB
	dir                                   string
	pki                                   *pkifix.PKI
	cert, key                             string
	okPort, tlsPort, closedPort, hangPort int
	resetPort                             int
}

// freePort returns a loopback TCP port that was free a moment ago, outside
// the ephemeral range (fixture.UnusedPort).
func (s *stacks) freePort() int {
	p, err := fixture.UnusedPort()
	if err != nil {
		s.t.Fatal(err)
	}
	return p
}

// write writes a generated configuration file and returns its path.
func (s *stacks) write(name, text string) string {
	p := filepath.Join(s.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// start runs a server in the foreground in its own process group, waits
// until every port accepts TCP connections (10 s at most), and kills the
// group when the test ends (stackfix.StartDaemon).
func (s *stacks) start(name string, ports []int, prog string, args ...string) bool {
	return stackfix.StartDaemon(s.t, stackfix.Daemon{Name: name, Dir: s.dir, Ports: ports, Prog: prog, Args: args,
		Env: append(diffEnv(s.dir, ""), "XDG_DATA_HOME="+filepath.Join(s.dir, "data")), LogEnv: "CURLDIFF_LOGS"})
}

func local(port int, path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", port, path) }
func localTLS(port int, path string) string {
	return fmt.Sprintf("https://127.0.0.1:%d%s", port, path)
}

// openDir makes dir and its parents readable by a server that drops root
// for another user (apache's www-data, squid's proxy); a no-op for others.
func (s *stacks) openDir(dir string, mode os.FileMode) {
	if os.Geteuid() != 0 {
		return
	}
	// The test's own directories only: never the temporary directory
	// itself (/tmp is 1777, and a sticky world-writable directory is what
	// the state file's checks trust; chmod-ing it broke every other test
	// writing there while this one ran).
	tmp := filepath.Clean(os.TempDir())
	for d := dir; strings.HasPrefix(d, tmp+string(filepath.Separator)); d = filepath.Dir(d) {
		os.Chmod(d, mode|0o111)
	}
	os.Chmod(dir, mode)
}

func (s *stacks) nginx() []diffCase {
	p, ptls, pcc := s.freePort(), s.freePort(), s.freePort()
	d := filepath.Join(s.dir, "nginx")
	conf := s.write("nginx/nginx.conf", stackfix.NginxPrelude(d)+fmt.Sprintf(`  proxy_connect_timeout 1s;
  proxy_read_timeout 1s;
  server {
    listen 127.0.0.1:%[2]d;
    location = /health { return 200 "ok\n"; }
    location = /503 { return 503; }
    location = /close { return 444; }
    location = /redirect { return 302 /health; }
    location = /dead { proxy_pass http://127.0.0.1:%[5]d; }
    location = /slow { proxy_pass http://127.0.0.1:%[6]d; }
    location = /upload { client_max_body_size 1k; return 200 "taken\n"; }
    location = /upload-stalled {
      client_max_body_size 0;
      proxy_request_buffering off;
      proxy_send_timeout 30s;
      proxy_pass http://127.0.0.1:%[6]d;
    }
    location = /short { proxy_pass http://127.0.0.1:%[10]d; }
    location = /throttled { limit_rate 1k; alias %[1]s/throttled.bin; }
    location = /large { alias %[1]s/large.txt; }
    location = /far { alias %[1]s/far.txt; }
    location = /gz { gzip on; gzip_min_length 1; gzip_types *; alias %[1]s/gz.txt; }
    location = /status {
      default_type application/json;
      add_header X-Ready yes always;
      add_header X-Check first always;
      add_header X-Check second always;
      add_header x-lower-name v1 always;
      return 200 '{"status":"ready","checks":{"db":"ok"},"version":3,"live":true,"items":["a","b"],"ratio":1.50,"limit":1e3,"gone":null,"id":12345678901234567890}';
    }
    location = /status-dup {
      default_type application/json;
      return 200 '{"status":"starting","checks":{"db":"down","db":"ok"},"status":"ready"}';
    }
    location = /status-gz { default_type application/json; gzip on; gzip_min_length 1; gzip_types *; alias %[1]s/status.json; }
    location = /retry-seconds { add_header Retry-After 2 always; return 503; }
    location = /retry-date { add_header Retry-After "%[11]s" always; return 503; }
    location = /retry-past { add_header Retry-After "%[12]s" always; return 503; }
    location = /retry-garbage { add_header Retry-After "soon" always; return 503; }
    location = /retry-fraction { add_header Retry-After "1.5" always; return 503; }
  }
  server {
    listen 127.0.0.1:%[3]d ssl http2;
    ssl_certificate %[7]s;
    ssl_certificate_key %[8]s;
    location = /health { return 200 "ok\n"; }
    location = /status { default_type application/json; add_header X-Check first always; add_header X-Check second always; return 200 '{"status":"ready"}'; }
    location = /status-gz { default_type application/json; gzip on; gzip_min_length 1; gzip_types *; alias %[1]s/status.json; }
    location = /retry-seconds { add_header Retry-After 2 always; return 503; }
    location = /upload { client_max_body_size 1k; return 200 "taken\n"; }
  }
  server {
    listen 127.0.0.1:%[4]d ssl;
    ssl_protocols TLSv1.3;
    ssl_certificate %[7]s;
    ssl_certificate_key %[8]s;
    ssl_verify_client on;
    ssl_client_certificate %[9]s;
    location = /health { return 200 "ok\n"; }
  }
}
`, d, p, ptls, pcc, s.closedPort, s.hangPort, s.cert, s.key, s.pki.CAFile, s.resetPort,
		time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)))
	// A static file of 64 KiB that nginx sends at 1 KiB/s (limit_rate):
	// its headers at once, its body for a minute.
	s.write("nginx/throttled.bin", strings.Repeat("x", 64<<10))
	// Static bodies for the body conditions: a text 32 KiB into a 40 KiB
	// file (which comes in several reads; where they split is the
	// kernel's, so the split itself is TestScanBody's), one past
	// --max-body (64 KiB), and a text file nginx gzips.
	s.write("nginx/large.txt", strings.Repeat("a", 32<<10-3)+"NEEDLE"+strings.Repeat("b", 8<<10)+"\n")
	s.write("nginx/far.txt", strings.Repeat("a", 70<<10)+"NEEDLE\n")
	s.write("nginx/gz.txt", strings.Repeat("status: starting\n", 2000)+"status: ready\n")
	// A JSON document nginx gzips (padded past what gzip would not
	// bother with).
	s.write("nginx/status.json", `{"status":"ready","checks":{"db":"ok"},"pad":"`+strings.Repeat("x", 4096)+`"}`+"\n")
	if !s.start("nginx", []int{p, ptls, pcc}, "nginx", "-p", d, "-c", conf, "-e", filepath.Join(d, "error.log")) {
		return nil
	}
	ca := s.pki.CAFile
	// A 4 MiB upload to a 1 KiB limit: nginx answers 413 on the head.
	upload := s.write("nginx/upload.bin", strings.Repeat("x", 4<<20))
	// A 32 MiB upload nginx streams (proxy_request_buffering off) to an
	// upstream that never reads it: nginx stops reading once its upstream
	// write blocks, the request never finishes going out and no answer
	// comes. curl times out (28); healthctl says where it stopped, the
	// body's write (request_body_timeout), not "no response headers".
	stalled := s.write("nginx/stalled.bin", strings.Repeat("x", 32<<20))
	return []diffCase{
		{name: "nginx/upload-stalled", url: local(p, "/upload-stalled"), dataFile: stalled, hcSays: "request body not sent: wrote "},
		{name: "nginx/upload-413", url: local(p, "/upload"), dataFile: upload},
		{name: "nginx/h2-upload-413", url: localTLS(ptls, "/upload"), cacert: ca, dataFile: upload},
		{name: "nginx/ok", url: local(p, "/health")},
		{name: "nginx/503", url: local(p, "/503")},
		{name: "nginx/444-close", url: local(p, "/close")},
		{name: "nginx/redirect", url: local(p, "/redirect")},
		{name: "nginx/upstream-dead-502", url: local(p, "/dead")},
		{name: "nginx/upstream-slow-504", url: local(p, "/slow")},
		// nginx ends the answer short of its Content-Length when its
		// upstream resets mid-body: curl says 18 (partial file), and
		// healthctl's HTTP/1.1 exchange reads the common answer's head
		// itself (readResponse) and the short body as unexpected EOF.
		{name: "nginx/upstream-reset-short-body", url: local(p, "/short"), hcSays: "unexpected EOF"},
		// nginx's own limit_rate on a static file: the headers come at
		// once, the body at 1 KiB/s for a minute. Both time out: curl at
		// -m, healthctl when its read window (request written to last
		// body byte) closes in the body's stage, on a server that paces
		// the body itself.
		{name: "nginx/limit-rate-body-timeout", url: local(p, "/throttled"), hcSays: "response body not complete within --read-timeout 2s"},
		// Body conditions against the body curl got (bodyHolds).
		{name: "nginx/body-text", url: local(p, "/health"), expectBody: []string{"ok"}},
		{name: "nginx/body-text-missing", url: local(p, "/health"), expectBody: []string{"ready"}, hcSays: `body does not contain "ready"`},
		{name: "nginx/body-regex", url: local(p, "/health"), expectRegex: []string{`^ok\n$`}},
		{name: "nginx/body-large", url: local(p, "/large"), expectBody: []string{"NEEDLE"}, expectRegex: []string{`a{100}NEEDLEb`}},
		{name: "nginx/body-past-max-body", url: local(p, "/far"), expectBody: []string{"NEEDLE"}},
		{name: "nginx/body-gzip", url: local(p, "/gz"), expectBody: []string{"status: ready"}, expectRegex: []string{`(?m)^status: ready$`}},
		{name: "nginx/body-gzip-asked", url: local(p, "/gz"), expectBody: []string{"status: ready"}, hc: []string{"-H", "Accept-Encoding: gzip"}},
		// Header conditions against the -D dump curl got (headersHold),
		// JSON conditions against the body curl got (jsonHolds).
		{name: "nginx/header-holds", url: local(p, "/status"), expectHeader: []string{"X-Ready=^yes$"}},
		{name: "nginx/header-differs", url: local(p, "/status"), expectHeader: []string{"X-Ready=^no$"}, hcSays: "header X-Ready does not match /^no$/"},
		{name: "nginx/header-missing", url: local(p, "/status"), expectHeader: []string{"X-Absent=."}, hcSays: "header X-Absent is missing"},
		// X-Check is sent twice (first, second): either line holds.
		{name: "nginx/header-repeated-second", url: local(p, "/status"), expectHeader: []string{"X-Check=^second$"}},
		{name: "nginx/header-repeated-both", url: local(p, "/status"), expectHeader: []string{"X-Check=^first$", "X-Check=^second$"}},
		{name: "nginx/header-repeated-neither", url: local(p, "/status"), expectHeader: []string{"X-Check=^first, second$"}},
		// Names in any case: nginx sends x-lower-name, the condition
		// names X-Ready in lower case.
		{name: "nginx/header-name-case", url: local(p, "/status"), expectHeader: []string{"x-ready=^yes$", "X-LOWER-NAME=^v1$"}},
		{name: "nginx/json-holds", url: local(p, "/status"), expectJSON: []string{"status=ready", "checks.db=ok", "version=3", "live=true", "items.1=b"}},
		{name: "nginx/json-fraction-as-written", url: local(p, "/status"), expectJSON: []string{"ratio=1.50", "limit=1e3"}},
		{name: "nginx/json-fraction-as-number", url: local(p, "/status"), expectJSON: []string{"ratio=1.5", "limit=1000"}},
		{name: "nginx/json-fraction-differs", url: local(p, "/status"), expectJSON: []string{"ratio=1.51"}, hcSays: `JSON ratio is "1.50", want "1.51"`},
		{name: "nginx/json-null", url: local(p, "/status"), expectJSON: []string{"gone=null"}},
		{name: "nginx/json-null-not-empty", url: local(p, "/status"), expectJSON: []string{"gone="}, hcSays: `JSON gone is "null", want ""`},
		{name: "nginx/json-big-integer", url: local(p, "/status"), expectJSON: []string{"id=12345678901234567890"}},
		{name: "nginx/json-big-integer-differs", url: local(p, "/status"), expectJSON: []string{"id=12345678901234567891"}},
		{name: "nginx/json-differs", url: local(p, "/status"), expectJSON: []string{"status=starting"}, hcSays: `JSON status is "ready", want "starting"`},
		{name: "nginx/json-number-differs", url: local(p, "/status"), expectJSON: []string{"version=4"}},
		{name: "nginx/json-missing", url: local(p, "/status"), expectJSON: []string{"checks.cache=ok"}, hcSays: "JSON path checks.cache is missing"},
		{name: "nginx/json-index-missing", url: local(p, "/status"), expectJSON: []string{"items.2=c"}},
		// A key named twice in one object: the last value counts, as
		// encoding/json (the oracle), JSON.parse, jq and Python read it;
		// gjson alone would find the first.
		{name: "nginx/json-duplicate-last-counts", url: local(p, "/status-dup"), expectJSON: []string{"status=ready", "checks.db=ok"}},
		{name: "nginx/json-duplicate-first-does-not", url: local(p, "/status-dup"), expectJSON: []string{"status=starting"}, hcSays: `JSON status is "ready", want "starting" (the body names a key twice`},
		{name: "nginx/json-duplicate-nested-first", url: local(p, "/status-dup"), expectJSON: []string{"checks.db=down"}},
		{name: "nginx/json-not-json", url: local(p, "/health"), expectJSON: []string{"status=ready"}, hcSays: "body is not JSON"},
		{name: "nginx/json-and-header", url: local(p, "/status"), expectJSON: []string{"status=ready"}, expectHeader: []string{"Content-Type=^application/json$"}},
		// gzip'd by nginx: the JSON is read decoded, the header as sent.
		{name: "nginx/json-gzip", url: local(p, "/status-gz"), expectJSON: []string{"status=ready", "checks.db=ok"}},
		{name: "nginx/json-gzip-encoding-header", url: local(p, "/status-gz"), expectJSON: []string{"status=ready"}, expectHeader: []string{"Content-Encoding=^gzip$"}},
		// Retry-After on a 503 (every case compares it: retryAgrees).
		{name: "nginx/retry-after-seconds", url: local(p, "/retry-seconds")},
		{name: "nginx/retry-after-date", url: local(p, "/retry-date")},
		{name: "nginx/retry-after-past-date", url: local(p, "/retry-past")},
		{name: "nginx/retry-after-garbage", url: local(p, "/retry-garbage")},
		{name: "nginx/retry-after-fraction", url: local(p, "/retry-fraction")},
		{name: "nginx/h2-ok", url: localTLS(ptls, "/health"), cacert: ca},
		// Over HTTP/2 (net/http's Transport): header names come lower case.
		{name: "nginx/h2-header-repeated", url: localTLS(ptls, "/status"), cacert: ca, expectHeader: []string{"X-Check=^second$"}, expectJSON: []string{"status=ready"}},
		{name: "nginx/h2-json-gzip-encoding-header", url: localTLS(ptls, "/status-gz"), cacert: ca, expectJSON: []string{"status=ready"}, expectHeader: []string{"Content-Encoding=^gzip$"}},
		{name: "nginx/h2-retry-after-seconds", url: localTLS(ptls, "/retry-seconds"), cacert: ca},
		{name: "nginx/h2-post", url: localTLS(ptls, "/health"), cacert: ca, data: "x=1"},
		{name: "nginx/clientcert13", url: localTLS(pcc, "/health"), cacert: ca},
		{name: "nginx/clientcert13-given", url: localTLS(pcc, "/health"), cacert: ca, cert: s.pki.ClientCertFile, key: s.pki.ClientKeyFile},
		{name: "nginx/not-tls", url: localTLS(p, "/health"), cacert: ca},
	}
}

func (s *stacks) haproxy() []diffCase {
	p := s.freePort()
	conf := s.write("haproxy/haproxy.cfg", stackfix.HAProxyPrelude(64)+fmt.Sprintf(`frontend f
  bind 127.0.0.1:%d
  http-request return status 200 content-type text/plain string "ok" if { path /health }
  use_backend dead if { path /dead }
  use_backend slow if { path /slow }
  use_backend held if { path /held }
  default_backend dead
backend dead
  server s1 127.0.0.1:%d
backend slow
  server s1 127.0.0.1:%d
backend held
  timeout server 30s
  server s1 127.0.0.1:%d
`, p, s.closedPort, s.hangPort, s.hangPort))
	if !s.start("haproxy", []int{p}, "haproxy", "-db", "-f", conf) {
		return nil
	}
	return []diffCase{
		{name: "haproxy/ok", url: local(p, "/health")},
		{name: "haproxy/backend-dead-503", url: local(p, "/dead")},
		{name: "haproxy/backend-slow-504", url: local(p, "/slow")},
		// haproxy holds the request for a backend that never answers,
		// past healthctl's read window (2 s) and curl's -m: both time
		// out, healthctl on its own window (one timer for the three),
		// on a server it did not write.
		{name: "haproxy/held-headers-timeout", url: local(p, "/held"), hcSays: "no response headers within --read-timeout 2s"},
	}
}

// nghttpd is nghttp2's server without TLS: it speaks only HTTP/2 (h2c with
// prior knowledge) and answers an HTTP/1.1 request with its SETTINGS frame.
func (s *stacks) nghttpd() []diffCase {
	p := s.freePort()
	docs := filepath.Join(s.dir, "nghttpd")
	s.write("nghttpd/health", "ok\n")
	if !s.start("nghttpd", []int{p}, "nghttpd", "--no-tls", "-a", "127.0.0.1", "-d", docs, strconv.Itoa(p)) {
		return nil
	}
	return []diffCase{
		{name: "nghttpd/h2c-ok", url: local(p, "/health"), h2c: true},
		{name: "nghttpd/h2c-404", url: local(p, "/missing"), h2c: true},
		// Without --http2-prior-knowledge: curl refuses the answer
		// (exit 1, "HTTP/0.9"), healthctl says protocol_error and names
		// the flag.
		{name: "nghttpd/http1-to-h2-only", url: local(p, "/health"), hcSays: "probe it with --http2-prior-knowledge"},
	}
}

func (s *stacks) caddy() []diffCase {
	p, ptls := s.freePort(), s.freePort()
	conf := s.write("caddy/caddy.json", fmt.Sprintf(`{
  "admin": {"disabled": true},
  "logging": {"logs": {"default": {"level": "ERROR"}}},
  "storage": {"module": "file_system", "root": %q},
  "apps": {
    "http": {
      "servers": {
        "plain": {
          "listen": ["127.0.0.1:%d"],
          "automatic_https": {"disable": true},
          "routes": [
            {"match": [{"path": ["/health"]}], "handle": [{"handler": "static_response", "status_code": 200, "body": "ok\n"}]},
            {"match": [{"path": ["/503"]}], "handle": [{"handler": "static_response", "status_code": 503, "body": "down\n"}]},
            {"match": [{"path": ["/dead"]}], "handle": [{"handler": "reverse_proxy", "upstreams": [{"dial": "127.0.0.1:%d"}]}]}
          ]
        },
        "tls": {
          "listen": ["127.0.0.1:%d"],
          "protocols": ["h1", "h2"],
          "automatic_https": {"disable": true},
          "tls_connection_policies": [{"default_sni": "localhost"}],
          "routes": [
            {"match": [{"path": ["/health"]}], "handle": [{"handler": "static_response", "status_code": 200, "body": "ok\n"}]}
          ]
        }
      }
    },
    "tls": {"certificates": {"load_files": [{"certificate": %q, "key": %q}]}}
  }
}
`, filepath.Join(s.dir, "caddy", "data"), p, s.closedPort, ptls, s.cert, s.key))
	if !s.start("caddy", []int{p, ptls}, "caddy", "run", "--config", conf) {
		return nil
	}
	ca := s.pki.CAFile
	return []diffCase{
		{name: "caddy/ok", url: local(p, "/health")},
		{name: "caddy/503", url: local(p, "/503")},
		{name: "caddy/upstream-dead-502", url: local(p, "/dead")},
		{name: "caddy/h2-ok", url: localTLS(ptls, "/health"), cacert: ca},
		{name: "caddy/h2-post", url: localTLS(ptls, "/health"), cacert: ca, data: "x=1"},
		{name: "caddy/wrong-name", url: fmt.Sprintf("https://other.invalid:%d/health", ptls), cacert: ca,
			hc:   []string{"--resolve", fmt.Sprintf("other.invalid:%d:127.0.0.1", ptls)},
			curl: []string{"--resolve", fmt.Sprintf("other.invalid:%d:127.0.0.1", ptls)}},
	}
}

// apache is httpd with mod_ssl: a client certificate asked for only under
// /secure — by renegotiation on TLS 1.2, by post-handshake authentication
// on TLS 1.3 — and one asked for at the handshake.
func (s *stacks) apache() []diffCase {
	p12, p13, pcc := s.freePort(), s.freePort(), s.freePort()
	d := filepath.Join(s.dir, "apache")
	docs := filepath.Join(d, "htdocs")
	for _, f := range []string{"health", "secure/health"} {
		s.write("apache/htdocs/"+f, "ok\n")
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "User www-data\nGroup www-data\n"
		s.openDir(docs, 0o755)
		s.openDir(filepath.Join(docs, "secure"), 0o755)
		os.Chmod(filepath.Join(docs, "health"), 0o644)
		os.Chmod(filepath.Join(docs, "secure", "health"), 0o644)
	}
	mods := "/usr/lib/apache2/modules"
	vhost := func(port int, proto, inner string) string {
		return fmt.Sprintf(`<VirtualHost 127.0.0.1:%d>
  SSLEngine on
  SSLProtocol -all +%s
  SSLCertificateFile %s
  SSLCertificateKeyFile %s
  SSLCACertificateFile %s
%s
</VirtualHost>
`, port, proto, s.cert, s.key, s.pki.CAFile, inner)
	}
	secure := "  <Location /secure>\n    SSLVerifyClient require\n    SSLVerifyDepth 2\n  </Location>"
	conf := s.write("apache/httpd.conf", fmt.Sprintf(`ServerRoot %[1]s
ServerName localhost
%[2]sLoadModule mpm_event_module %[3]s/mod_mpm_event.so
LoadModule authz_core_module %[3]s/mod_authz_core.so
LoadModule socache_shmcb_module %[3]s/mod_socache_shmcb.so
LoadModule ssl_module %[3]s/mod_ssl.so
PidFile %[1]s/httpd.pid
ErrorLog %[1]s/error.log
LogLevel warn
Mutex file:%[1]s default
SSLSessionCache shmcb:%[1]s/ssl_scache(512000)
StartServers 1
ServerLimit 1
ThreadsPerChild 8
MaxRequestWorkers 8
Listen 127.0.0.1:%[4]d
Listen 127.0.0.1:%[5]d
Listen 127.0.0.1:%[6]d
DocumentRoot %[7]s
<Directory />
  Require all granted
</Directory>
%[8]s%[9]s%[10]s`, d, user, mods, p12, p13, pcc, docs,
		vhost(p12, "TLSv1.2", secure), vhost(p13, "TLSv1.3", secure), vhost(pcc, "TLSv1.2", "  SSLVerifyClient require\n  SSLVerifyDepth 2")))
	if os.Geteuid() == 0 {
		s.openDir(d, 0o777)
	}
	s.t.Cleanup(func() {
		if s.t.Failed() || os.Getenv("CURLDIFF_LOGS") != "" {
			b, _ := os.ReadFile(filepath.Join(d, "error.log"))
			s.t.Logf("apache's error.log:\n%s", b)
		}
	})
	if !s.start("apache", []int{p12, p13, pcc}, "apache2", "-f", conf, "-DFOREGROUND") {
		return nil
	}
	ca, cert, key := s.pki.CAFile, s.pki.ClientCertFile, s.pki.ClientKeyFile
	return []diffCase{
		{name: "apache/tls12-ok", url: localTLS(p12, "/health"), cacert: ca},
		{name: "apache/tls12-reneg", url: localTLS(p12, "/secure/health"), cacert: ca},
		{name: "apache/tls12-reneg-given", url: localTLS(p12, "/secure/health"), cacert: ca, cert: cert, key: key},
		{name: "apache/tls13-ok", url: localTLS(p13, "/health"), cacert: ca},
		{name: "apache/tls13-pha", url: localTLS(p13, "/secure/health"), cacert: ca},
		{name: "apache/tls13-pha-given", url: localTLS(p13, "/secure/health"), cacert: ca, cert: cert, key: key},
		{name: "apache/tls12-handshake-cert", url: localTLS(pcc, "/health"), cacert: ca},
		{name: "apache/tls12-handshake-cert-given", url: localTLS(pcc, "/health"), cacert: ca, cert: cert, key: key},
		{name: "apache/missing-404", url: localTLS(p12, "/nothing"), cacert: ca},
	}
}

// unbound answers from local zones only: everything else is refused, and a
// recursion it might still try goes to a closed loopback port.
func (s *stacks) unbound() []diffCase {
	p := s.freePort()
	d := filepath.Join(s.dir, "unbound")
	conf := s.write("unbound/unbound.conf", fmt.Sprintf(`server:
  interface: 127.0.0.1@%[1]d
  port: %[1]d
  do-daemonize: no
  username: ""
  chroot: ""
  directory: %[2]q
  pidfile: "%[2]s/unbound.pid"
  use-syslog: no
  logfile: ""
  verbosity: 0
  do-ip6: no
  access-control: 127.0.0.0/8 allow
  module-config: "iterator"
  local-zone: "." refuse
  local-zone: "invalid." refuse
  local-zone: "app.invalid." static
  local-data: "app.invalid. A 127.0.0.1"
  local-zone: "nodata.invalid." static
  local-data: "nodata.invalid. TXT \"no address\""
  local-zone: "nx.invalid." always_nxdomain
  local-zone: "refuse.invalid." always_refuse
  local-zone: "deny.invalid." deny
forward-zone:
  name: "."
  forward-addr: 127.0.0.1@%[3]d
remote-control:
  control-enable: no
`, p, d, s.closedPort))
	_ = os.MkdirAll(d, 0o755)
	if !s.start("unbound", []int{p}, "unbound", "-d", "-c", conf) {
		return nil
	}
	dns := fmt.Sprintf("127.0.0.1:%d", p)
	u := func(name string) string { return fmt.Sprintf("http://%s:%d/health", name, s.okPort) }
	return []diffCase{
		{name: "unbound/app", url: u("app.invalid"), dns: dns},
		{name: "unbound/nodata", url: u("nodata.invalid"), dns: dns},
		{name: "unbound/nxdomain", url: u("nx.invalid"), dns: dns},
		{name: "unbound/refuse", url: u("refuse.invalid"), dns: dns},
		{name: "unbound/outside-zones", url: u("elsewhere.invalid"), dns: dns},
		{name: "unbound/deny", url: u("deny.invalid"), dns: dns},
	}
}

// squid is a loopback proxy with three ports: open, wanting credentials
// (any will do: basic_fake_auth), and denying everything; and a fourth,
// open, behind TLS of its own (https_port: an https:// proxy, its
// certificate the script CA's for 127.0.0.1).
func (s *stacks) squid() []diffCase {
	p, pauth, pdeny, ptls := s.freePort(), s.freePort(), s.freePort(), s.freePort()
	d := filepath.Join(s.dir, "squid")
	if err := os.MkdirAll(d, 0o777); err != nil {
		s.t.Fatal(err)
	}
	s.openDir(d, 0o777)
	conf := s.write("squid/squid.conf", fmt.Sprintf(`http_port 127.0.0.1:%[1]d
http_port 127.0.0.1:%[2]d
http_port 127.0.0.1:%[3]d
https_port 127.0.0.1:%[5]d tls-cert=%[6]s tls-key=%[7]s
pid_filename %[4]s/squid.pid
cache_log %[4]s/cache.log
access_log none
cache deny all
cache_mem 8 MB
visible_hostname healthctl-test
pinger_enable off
dns_nameservers 127.0.0.1
shutdown_lifetime 0 seconds
coredump_dir %[4]s
connect_timeout 2 seconds
auth_param basic program /usr/lib/squid/basic_fake_auth
auth_param basic realm healthctl-test
acl authport localport %[2]d
acl denyport localport %[3]d
acl authed proxy_auth REQUIRED
http_access deny denyport
http_access deny authport !authed
http_access allow localhost
http_access deny all
`, p, pauth, pdeny, d, ptls, s.cert, s.key))
	if !s.start("squid", []int{p, pauth, pdeny, ptls}, "squid", "-N", "-f", conf) {
		return nil
	}
	ca := s.pki.CAFile
	px := func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }
	pxTLS := fmt.Sprintf("https://127.0.0.1:%d", ptls)
	proxyCA := []string{"--proxy-cacert", ca}
	return []diffCase{
		// The proxy's own TLS is the proxy's: verified against its own
		// certificate with --proxy-cacert (curl's name), apart from the
		// target's -k; --proxy-insecure alone skips it.
		{name: "squid-tls/ok-http", url: local(s.okPort, "/health"), proxy: pxTLS, hc: proxyCA, curl: proxyCA},
		{name: "squid-tls/ok-https", url: localTLS(s.tlsPort, "/health"), proxy: pxTLS, cacert: ca, hc: proxyCA, curl: proxyCA},
		{name: "squid-tls/unverified-k", url: local(s.okPort, "/health"), proxy: pxTLS, hc: []string{"-k"}, curl: []string{"-k"}},
		{name: "squid-tls/proxy-insecure", url: local(s.okPort, "/health"), proxy: pxTLS, hc: []string{"--proxy-insecure"}, curl: []string{"--proxy-insecure"}},
		{name: "squid/ok-http", url: local(s.okPort, "/health"), proxy: px(p)},
		{name: "squid/ok-https", url: localTLS(s.tlsPort, "/health"), proxy: px(p), cacert: ca},
		{name: "squid/dead-http", url: local(s.closedPort, "/health"), proxy: px(p)},
		{name: "squid/dead-https", url: localTLS(s.closedPort, "/health"), proxy: px(p), cacert: ca},
		{name: "squid/auth-http", url: local(s.okPort, "/health"), proxy: px(pauth)},
		{name: "squid/auth-https", url: localTLS(s.tlsPort, "/health"), proxy: px(pauth), cacert: ca},
		{name: "squid/deny-http", url: local(s.okPort, "/health"), proxy: px(pdeny)},
		{name: "squid/deny-https", url: localTLS(s.tlsPort, "/health"), proxy: px(pdeny), cacert: ca},
	}
}
