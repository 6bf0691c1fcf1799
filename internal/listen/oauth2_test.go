package listen

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/fixture/peers"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

// apiServer answers 200 to a request with the Authorization want holds,
// 401 to any other.
func apiServer(t *testing.T, want func() string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want() {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "UP")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestOAuth2 (http_client_config.oauth2, client credentials): each probe
// fetches a token from token_url — the credentials in a Basic header, or
// in the form when the endpoint refuses the header, the scopes and the
// endpoint_params — and sends it as a Bearer; a token that cannot be had
// is probe_success 0 saying why (never a hang past the budget); the
// secret and the token appear in no answer, /config or debug=true.
func TestOAuth2(t *testing.T) {
	ts := peers.NewTokenServer(t, "healthctl", "s3cr3t-client")
	formOnly := peers.NewTokenServer(t, "healthctl", "s3cr3t-client")
	formOnly.FormOnly = true
	hang := peers.NewTokenServer(t, "healthctl", "s3cr3t-client")
	hang.Hang = true
	var mu sync.Mutex
	issued := 0
	api := apiServer(t, func() string {
		mu.Lock()
		defer mu.Unlock()
		return "Bearer " + peers.Token(issued)
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("s3cr3t-client\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yml := `modules:
  oauth:
    prober: http
    http:
      oauth2:
        client_id: healthctl
        client_secret: s3cr3t-client
        token_url: ` + ts.URL + `
        scopes: [read, health]
        endpoint_params: {audience: api.invalid}
  oauth_file:
    prober: http
    http:
      oauth2:
        client_id: healthctl
        client_secret_file: secret
        token_url: ` + ts.URL + `
  oauth_form:
    prober: http
    http:
      oauth2: {client_id: healthctl, client_secret: s3cr3t-client, token_url: ` + formOnly.URL + `}
  oauth_wrong:
    prober: http
    http:
      oauth2: {client_id: healthctl, client_secret: wrong-s3cr3t, token_url: ` + ts.URL + `}
  oauth_hang:
    prober: http
    http:
      oauth2: {client_id: healthctl, client_secret: s3cr3t-client, token_url: ` + hang.URL + `}
  oauth_closed:
    prober: http
    http:
      oauth2: {client_id: healthctl, client_secret: s3cr3t-client, token_url: "http://127.0.0.1:1/token"}
`
	mods, err := blackbox.ParseModules(filepath.Join(dir, "bb.yml"), []byte(yml), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	blackbox.BindAllow(mods, allow.Permits)
	h := New(Config{Interval: time.Minute, Probe: probe.Run, Modules: mods, Allow: allow}).Handler()
	for _, c := range []struct {
		module string
		// grants is how many grants the endpoint made by now.
		grants  int
		server  *peers.TokenServer
		want    []string
		granted bool
	}{
		{"oauth", 1, ts, []string{"\nprobe_success 1\n"}, true},
		{"oauth", 2, ts, []string{"\nprobe_success 1\n"}, true}, // a token for each probe
		{"oauth_file", 3, ts, []string{"\nprobe_success 1\n"}, true},
		{"oauth_form", 1, formOnly, []string{"\nprobe_success 1\n"}, true},
		{"oauth_wrong", 3, ts, []string{"\nprobe_success 0\n", `healthctl_probe_not_started{why="oauth2_token",prober="http"} 1`, "answered 401"}, false},
		{"oauth_hang", 0, hang, []string{"\nprobe_success 0\n", `why="oauth2_token"`}, false},
		{"oauth_closed", 0, nil, []string{"\nprobe_success 0\n", `why="oauth2_token"`, "connection refused"}, false},
	} {
		mu.Lock()
		issued = c.grants
		if c.server == formOnly {
			issued = 1
		}
		mu.Unlock()
		req := httptest.NewRequest("GET", "/probe?module="+c.module+"&target="+url.QueryEscape(api.URL+"/health"), nil)
		req.Header.Set(ScrapeTimeoutHeader, "1.5")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", c.module, rec.Code, body)
		}
		checkExposition(t, body)
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q\n%s", c.module, w, body)
			}
		}
		for _, secret := range []string{"s3cr3t-client", "wrong-s3cr3t", "tok-"} {
			if strings.Contains(body, secret) {
				t.Errorf("%s: %q in the answer\n%s", c.module, secret, body)
			}
		}
	}
	// What the endpoint got: the grant, the scopes, the params, the
	// credentials in the header; the form-only endpoint's second try had
	// them in the form.
	first := ts.Requests()[0]
	if first.Get("grant_type") != "client_credentials" || first.Get("scope") != "read health" || first.Get("audience") != "api.invalid" || first.Get("basic") != "1" {
		t.Errorf("token request %v", first)
	}
	if rs := formOnly.Requests(); len(rs) != 2 || rs[0].Get("basic") != "1" || rs[1].Get("basic") != "" || rs[1].Get("client_id") != "healthctl" {
		t.Errorf("form-only endpoint's requests %v: want a Basic try, then the form", rs)
	}
	// debug=true and /config: no secret, no token.
	mu.Lock()
	issued = 4
	mu.Unlock()
	code, body := get(t, h, "/probe?module=oauth&debug=true&target="+url.QueryEscape(api.URL+"/health"))
	if code != 200 || !strings.Contains(body, "Probe succeeded") || strings.Contains(body, "s3cr3t-client") || strings.Contains(body, "tok-4") {
		t.Errorf("debug: %d %s", code, body)
	}
	if !strings.Contains(body, "client_secret: <secret>") {
		t.Errorf("debug's module configuration shows the client secret:\n%s", body)
	}
	code, body = get(t, h, "/probe?module=oauth_wrong&debug=true&target="+url.QueryEscape(api.URL+"/health"))
	if code != 200 || !strings.Contains(body, "Probe failed") || strings.Contains(body, "wrong-s3cr3t") {
		t.Errorf("debug of a refused token: %d %s", code, body)
	}
}

// TestProxyURL (http_client_config.proxy_url, no_proxy): the module's
// proxy carries every probe of it but those no_proxy lists; its password
// is a secret (masked in /config and every answer).
func TestProxyURL(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.String()+" "+r.Header.Get("Proxy-Authorization"))
		mu.Unlock()
		io.WriteString(w, "UP via the proxy")
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	yml := `modules:
  proxied:
    prober: http
    http:
      proxy_url: ` + proxy.URL + `
  proxied_auth:
    prober: http
    http:
      proxy_url: http://prober:pr0xy-pw@` + pu.Host + `
  direct:
    prober: http
    http:
      proxy_url: ` + proxy.URL + `
      no_proxy: 127.0.0.1
`
	mods, err := blackbox.ParseModules("bb.yml", []byte(yml), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	blackbox.BindAllow(mods, allow.Permits)
	h := New(Config{Interval: time.Minute, Probe: probe.Run, Modules: mods, Allow: allow}).Handler()
	// Nothing listens on the target's port: only the proxy answers.
	tgt := "http://127.0.0.1:1/health"
	for _, c := range []struct {
		module, want string
	}{
		{"proxied", "\nprobe_success 1\n"},
		{"proxied_auth", "\nprobe_success 1\n"},
		{"direct", `reason="conn_refused"`},
	} {
		code, body := get(t, h, "/probe?module="+c.module+"&target="+url.QueryEscape(tgt))
		if code != 200 || !strings.Contains(body, c.want) || strings.Contains(body, "pr0xy-pw") {
			t.Errorf("%s: %d %s, want %q", c.module, code, body, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || !strings.HasPrefix(seen[0], tgt+" ") || !strings.HasPrefix(seen[1], tgt+" Basic ") {
		t.Errorf("the proxy saw %q: want the two proxied probes, the second with its credentials", seen)
	}
	if cfg := mods["proxied_auth"].Config(); strings.Contains(cfg, "pr0xy-pw") || !strings.Contains(cfg, "proxy_url: http://prober:") {
		t.Errorf("/config's module: %s", cfg)
	}
}

// TestHTTPClientConfigRefused: what blackbox's client config refuses is
// refused, naming the field.
func TestHTTPClientConfigRefused(t *testing.T) {
	for yml, want := range map[string]string{
		"modules:\n  m:\n    prober: http\n    http:\n      no_proxy: x.invalid\n":                                                            `http.no_proxy: given without proxy_url`,
		"modules:\n  m:\n    prober: http\n    http:\n      proxy_url: ftp://p.invalid\n":                                                     `http.proxy_url: "ftp://p.invalid": unsupported proxy scheme`,
		"modules:\n  m:\n    prober: http\n    http:\n      bearer_token: t\n      oauth2: {client_id: a, token_url: http://t.invalid/}\n":    `http.oauth2: with basic_auth, bearer_token or an Authorization header`,
		"modules:\n  m:\n    prober: http\n    http:\n      oauth2: {client_id: a}\n":                                                         `http.oauth2: want client_id and token_url`,
		"modules:\n  m:\n    prober: http\n    http:\n      oauth2: {client_id: a, token_url: http://t.invalid/, tls_config: {}}\n":           `http.oauth2.tls_config: not supported: "configures the token request's TLS settings"`,
		"modules:\n  m:\n    prober: http\n    http:\n      oauth2: {client_id: a, token_url: http://t.invalid/, client_secret_file: nope}\n": `http.oauth2.client_secret_file: "nope"`,
		"modules:\n  m:\n    prober: tcp\n    tcp:\n      proxy_url: http://p.invalid\n":                                                      `tcp.proxy_url: only for prober http`,
	} {
		_, err := blackbox.ParseModules("bb.yml", []byte(yml), target.Defaults(), noEnv)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", yml, err, want)
		}
	}
}
