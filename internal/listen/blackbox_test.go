package listen

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/target"
)

func noEnv(string) string { return "" }

// moduleOptions parses one module m (the YAML under modules: m:) and
// returns its options for target tgt, with the allow list bound.
func moduleOptions(t *testing.T, yml, tgt string) (*blackbox.Module, *scheme.Options) {
	t.Helper()
	mods, err := blackbox.ParseModules(filepath.Join(t.TempDir(), "bb.yml"), []byte("modules:\n  m:\n"+yml), target.Defaults(), noEnv)
	if err != nil {
		t.Fatalf("%q: %v", yml, err)
	}
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	blackbox.BindAllow(mods, allow.Permits)
	o, err := mods["m"].Options(tgt, 0)
	if err != nil {
		t.Fatalf("%q: %v", yml, err)
	}
	return mods["m"], o
}

// TestModuleDefaults: each http module field has blackbox_exporter's
// meaning and default (config/config.go's DefaultHTTPProbe and
// blackbox.DefaultModule; prober/http.go).
func TestModuleDefaults(t *testing.T) {
	for _, c := range []struct {
		name, yml string
		check     func(m *blackbox.Module, o *scheme.Options) string
	}{
		{"redirects followed by default", "    prober: http\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Follow != blackbox.MaxRedirects || o.HopAllowed == nil {
				return "not following"
			}
			return ""
		}},
		{"follow_redirects: true accepted", "    http:\n      follow_redirects: true\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Follow != blackbox.MaxRedirects {
				return "not following"
			}
			return ""
		}},
		{"follow_redirects: false honoured", "    http:\n      follow_redirects: false\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Follow != 0 {
				return "following"
			}
			return ""
		}},
		{"no_follow_redirects: true (blackbox's older name)", "    http:\n      no_follow_redirects: true\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Follow != 0 {
				return "following"
			}
			return ""
		}},
		{"GET even with a body", "    http:\n      body: '{}'\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Method != "GET" || string(o.Body) != "{}" {
				return "method " + o.Method + " body " + string(o.Body)
			}
			return ""
		}},
		{"method: POST", "    http:\n      method: POST\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Method != "POST" {
				return o.Method
			}
			return ""
		}},
		{"ip6 preferred with fallback by default", "    prober: http\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Prefer != 6 || o.Network != "tcp" {
				return o.Network
			}
			return ""
		}},
		{"ip4 preferred", "    http:\n      preferred_ip_protocol: ip4\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Prefer != 4 || o.Network != "tcp" {
				return o.Network
			}
			return ""
		}},
		{"ip4 only without fallback", "    http:\n      preferred_ip_protocol: ip4\n      ip_protocol_fallback: false\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Prefer != 0 || o.Network != "tcp4" {
				return o.Network
			}
			return ""
		}},
		{"valid_status_codes: [] is 2xx", "    http:\n      valid_status_codes: []\n", func(m *blackbox.Module, o *scheme.Options) string {
			if !o.Expect.Status.Contains(204) || o.Expect.Status.Contains(301) {
				return o.Expect.Status.String()
			}
			return ""
		}},
		{"valid_status_codes listed", "    http:\n      valid_status_codes: [301, 404]\n", func(m *blackbox.Module, o *scheme.Options) string {
			if !o.Expect.Status.Contains(404) || o.Expect.Status.Contains(200) {
				return o.Expect.Status.String()
			}
			return ""
		}},
		{"valid_http_versions", "    http:\n      valid_http_versions: [HTTP/1.1, HTTP/2.0]\n", func(m *blackbox.Module, o *scheme.Options) string {
			a := o.Expect.Answer
			if a.CheckAnswer(false, "HTTP/1.1", "", false, 0) != "" || a.CheckAnswer(false, "HTTP/2.0", "", false, 0) != "" || a.CheckAnswer(false, "HTTP/1.0", "", false, 0) == "" {
				return "versions not judged"
			}
			return ""
		}},
		{"fail_if_ssl", "    http:\n      fail_if_ssl: true\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Expect.Answer.CheckAnswer(true, "HTTP/1.1", "", false, 0) == "" || o.Expect.Answer.CheckAnswer(false, "HTTP/1.1", "", false, 0) != "" {
				return "fail_if_ssl not judged"
			}
			return ""
		}},
		{"fail_if_not_ssl", "    http:\n      fail_if_not_ssl: true\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Expect.Answer.CheckAnswer(false, "HTTP/1.1", "", false, 0) == "" {
				return "fail_if_not_ssl not judged"
			}
			return ""
		}},
		{"fail_if_body_matches_regexp is --expect-body-not", "    http:\n      fail_if_body_matches_regexp: [DOWN]\n", func(m *blackbox.Module, o *scheme.Options) string {
			if len(o.Expect.BodyNotRegex) != 1 || o.Expect.BodyNotRegex[0].String() != "DOWN" {
				return "no negative body condition"
			}
			return ""
		}},
		{"fail_if_body_not_matches_regexp is --expect-body-regex", "    http:\n      fail_if_body_not_matches_regexp: [UP]\n", func(m *blackbox.Module, o *scheme.Options) string {
			if len(o.Expect.BodyRegex) != 1 {
				return "no body condition"
			}
			return ""
		}},
		{"fail_if_header_matches: the header must be there", "    http:\n      fail_if_header_matches: [{header: X-Status, regexp: down}]\n", func(m *blackbox.Module, o *scheme.Options) string {
			if len(o.Expect.HeaderNotRE) != 1 || len(o.Expect.HeaderRE) != 1 || o.Expect.HeaderRE[0].AllowMissing {
				return "want a negative condition and a presence one"
			}
			return ""
		}},
		{"fail_if_header_matches with allow_missing", "    http:\n      fail_if_header_matches: [{header: X-Status, regexp: down, allow_missing: true}]\n", func(m *blackbox.Module, o *scheme.Options) string {
			if len(o.Expect.HeaderNotRE) != 1 || len(o.Expect.HeaderRE) != 0 {
				return "want the negative condition alone"
			}
			return ""
		}},
		{"fail_if_header_not_matches with allow_missing", "    http:\n      fail_if_header_not_matches: [{header: A, regexp: x}, {header: B, regexp: y, allow_missing: true}]\n", func(m *blackbox.Module, o *scheme.Options) string {
			if len(o.Expect.HeaderRE) != 2 || o.Expect.HeaderRE[0].AllowMissing || !o.Expect.HeaderRE[1].AllowMissing {
				return "allow_missing not marked"
			}
			return ""
		}},
		{"body_size_limit fails past it", "    http:\n      body_size_limit: 1KB\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.MaxBody != 1024 || !o.Expect.Answer.BodyLimit {
				return "no limit"
			}
			return ""
		}},
		{"body_size_limit 0: none", "    http:\n      body_size_limit: 0\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Expect.Answer.BodyLimit {
				return "a limit"
			}
			return ""
		}},
		{"compression asks for it", "    http:\n      compression: gzip\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Header.Get("Accept-Encoding") != "gzip" {
				return "Accept-Encoding " + o.Header.Get("Accept-Encoding")
			}
			return ""
		}},
		{"bearer_token", "    http:\n      bearer_token: s3cret\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Header.Get("Authorization") != "Bearer s3cret" || strings.Contains(o.Redactor.String("x s3cret"), "s3cret") {
				return "header " + o.Header.Get("Authorization") + ", or not masked"
			}
			return ""
		}},
		{"tls_config versions", "    http:\n      tls_config: {min_version: TLS12, max_version: TLS13, insecure_skip_verify: true, server_name: a.test}\n", func(m *blackbox.Module, o *scheme.Options) string {
			tc := o.TLSConfig
			if tc == nil || tc.MinVersion != tls.VersionTLS12 || tc.MaxVersion != tls.VersionTLS13 || !tc.InsecureSkipVerify || tc.ServerName != "a.test" {
				return "tls config not as given"
			}
			return ""
		}},
		{"enable_http2: true accepted", "    http:\n      enable_http2: true\n", func(m *blackbox.Module, o *scheme.Options) string { return "" }},
		{"tcp: no redirects, ip6 preferred", "    prober: tcp\n", func(m *blackbox.Module, o *scheme.Options) string {
			if o.Follow != 0 || o.Prefer != 6 {
				return "tcp options"
			}
			return ""
		}},
	} {
		tgt := "http://127.0.0.1:1/"
		if strings.Contains(c.yml, "prober: tcp") {
			tgt = "127.0.0.1:1"
		}
		m, o := moduleOptions(t, c.yml, tgt)
		if why := c.check(m, o); why != "" {
			t.Errorf("%s: %s", c.name, why)
		}
	}
}

// TestBearerTokenFile: the file is read at load, through the input file
// checks, relative to the modules file as blackbox resolves it.
func TestBearerTokenFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("tok3n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bb.yml"), []byte("modules:\n  m:\n    http:\n      bearer_token_file: token\n      basic_auth: {username: u, password_file: token}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mods, err := blackbox.ReadModules(filepath.Join(dir, "bb.yml"), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	o, err := mods["m"].Options("http://127.0.0.1:1/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if o.Header.Get("Authorization") != "Bearer tok3n" || o.Password != "tok3n" {
		t.Errorf("Authorization %q, password %q", o.Header.Get("Authorization"), o.Password)
	}
	// A FIFO or directory is refused as every input file is.
	if err := os.WriteFile(filepath.Join(dir, "bb.yml"), []byte("modules:\n  m:\n    http:\n      bearer_token_file: .\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := blackbox.ReadModules(filepath.Join(dir, "bb.yml"), target.Defaults(), noEnv); err == nil || !strings.Contains(err.Error(), "bearer_token_file") {
		t.Errorf("a directory as bearer_token_file: %v", err)
	}
}

// TestDebianBlackboxYML: Debian's stock /etc/prometheus/blackbox.yml
// (prometheus-blackbox-exporter 0.23, testdata/debian-blackbox.yml)
// loads unchanged, every module one healthctl runs (its icmp ones
// too); the banner modules (tcp's query_response) are dialogues.
func TestDebianBlackboxYML(t *testing.T) {
	mods, err := blackbox.ReadModules(filepath.Join("testdata", "debian-blackbox.yml"), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range mods {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"grpc", "grpc_plain", "http_2xx", "http_post_2xx", "icmp", "icmp_ttl5", "irc_banner", "pop3s_banner", "ssh_banner", "tcp_connect"}
	if !slices.Equal(names, want) {
		t.Errorf("modules %v, want %v", names, want)
	}
	if m := mods["icmp_ttl5"]; m.Prober != "icmp" || m.Timeout != 5*time.Second {
		t.Errorf("icmp_ttl5: %+v", m)
	}
	if o, err := mods["icmp_ttl5"].Options("::1", 0); err != nil || o.URL.String() != "icmp://[::1]?ttl=5" || o.Prefer != 6 || o.Network != "tcp" {
		t.Errorf("icmp_ttl5: %v %+v", err, o)
	}
	if o, err := mods["http_post_2xx"].Options("127.0.0.1:1", 0); err != nil || o.Method != "POST" || o.URL.String() != "http://127.0.0.1:1" {
		t.Errorf("http_post_2xx: %v %+v", err, o)
	}
	if o, err := mods["grpc"].Options("127.0.0.1:1", 0); err != nil || o.URL.Scheme != "grpcs" || o.Prefer != 4 {
		t.Errorf("grpc: %v %+v", err, o)
	}
	irc, err := mods["irc_banner"].Options("127.0.0.1:6667", 0)
	if err != nil || len(irc.Dialogue) != 4 || irc.Dialogue[0].Send != "NICK prober" || irc.Dialogue[2].Expect.String() != "PING :([^ ]+)" || irc.Dialogue[2].Send != "PONG ${1}" {
		t.Errorf("irc_banner: %v %+v", err, irc)
	}
	if pop, err := mods["pop3s_banner"].Options("127.0.0.1:995", 0); err != nil || pop.URL.Scheme != "tls" || len(pop.Dialogue) != 1 {
		t.Errorf("pop3s_banner: %v %+v", err, pop)
	}
}

// TestProbeBlackboxSemantics: through /probe, with the real probe, over
// loopback servers: each field's meaning as blackbox_exporter's.
func TestProbeBlackboxSemantics(t *testing.T) {
	mux := http.NewServeMux()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "UP") }))
	defer other.Close()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "UP") })
	mux.HandleFunc("/redir", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/ok", http.StatusFound)
	})
	mux.HandleFunc("/getonly", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
	mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "status: DOWN") })
	mux.HandleFunc("/degraded", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Status", "degraded") })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 2048)) })
	mux.HandleFunc("/auth", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	const yml = `modules:
  http_2xx:
    prober: http
  nofollow:
    prober: http
    http:
      follow_redirects: false
  body_get:
    prober: http
    http:
      body: "x"
  post:
    prober: http
    http:
      method: POST
  not_down:
    prober: http
    http:
      fail_if_body_matches_regexp: [DOWN]
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
      fail_if_header_not_matches: [{header: X-Missing, regexp: yes, allow_missing: true}]
  missing_not_ok:
    prober: http
    http:
      fail_if_header_not_matches: [{header: X-Missing, regexp: yes}]
  ssl:
    prober: http
    http:
      fail_if_not_ssl: true
  no_ssl:
    prober: http
    http:
      fail_if_ssl: true
  h2:
    prober: http
    http:
      valid_http_versions: [HTTP/2.0]
  h11:
    prober: http
    http:
      valid_http_versions: [HTTP/1.1]
  limit:
    prober: http
    http:
      body_size_limit: 1KB
  bearer:
    prober: http
    http:
      bearer_token: t0k
  redirect_ok:
    prober: http
    http:
      valid_status_codes: [302]
      follow_redirects: false
`
	mods, err := blackbox.ParseModules("bb.yml", []byte(yml), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	allow, _ := ParseAllow([]string{u.Host})
	blackbox.BindAllow(mods, allow.Permits)
	h := New(Config{Interval: time.Minute, Probe: probe.Run, Modules: mods, Allow: allow}).Handler()
	for _, c := range []struct {
		module, path string
		success      int
		also         string
	}{
		{"http_2xx", "/ok", 1, "probe_http_redirects 0"},
		{"http_2xx", "/redir", 1, "probe_http_redirects 1"},
		{"nofollow", "/redir", 0, "probe_http_status_code 302"},
		// Offered, not followed: counted as blackbox counts it.
		{"nofollow", "/redir", 0, "probe_http_redirects 1"},
		{"nofollow", "/redir", 0, "probe_http_uncompressed_body_length 0"},
		{"redirect_ok", "/redir", 1, "probe_http_status_code 302"},
		// The next hop is outside the allow list: not followed.
		{"http_2xx", "/away", 0, "probe_http_status_code 302"},
		{"body_get", "/getonly", 1, "probe_http_status_code 200"},
		{"post", "/getonly", 0, "probe_http_status_code 405"},
		{"not_down", "/ok", 1, "probe_failed_due_to_regex 0"},
		{"not_down", "/down", 0, "probe_failed_due_to_regex 1"},
		{"not_degraded", "/degraded", 0, ""},
		{"not_degraded", "/ok", 1, ""},
		{"status_there", "/ok", 0, ""},
		{"missing_ok", "/ok", 1, ""},
		{"missing_not_ok", "/ok", 0, ""},
		{"ssl", "/ok", 0, ""},
		{"no_ssl", "/ok", 1, ""},
		{"h2", "/ok", 0, ""},
		{"h11", "/ok", 1, "probe_http_version 1.1"},
		{"limit", "/ok", 1, ""},
		{"limit", "/big", 0, ""},
		{"bearer", "/auth", 1, ""},
		{"http_2xx", "/auth", 0, "probe_http_status_code 401"},
	} {
		code, body := get(t, h, "/probe?module="+c.module+"&target="+url.QueryEscape(srv.URL+c.path))
		if code != 200 {
			t.Fatalf("%s %s: %d %s", c.module, c.path, code, body)
		}
		checkExposition(t, body)
		if !strings.Contains(body, "\nprobe_success "+strconv.Itoa(c.success)+"\n") || c.also != "" && !strings.Contains(body, "\n"+c.also+"\n") {
			t.Errorf("%s %s: want probe_success %d and %q\n%s", c.module, c.path, c.success, c.also, body)
		}
	}
}
