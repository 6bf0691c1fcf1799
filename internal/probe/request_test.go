package probe_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/proxyenv"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// seen is what a recording server received.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
	body []string
}

func recorder(t *testing.T, h http.HandlerFunc) (*httptest.Server, *seen) {
	s := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		s.body = append(s.body, string(b))
		s.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.Header().Set("X-Version", "1.2.3")
		io.WriteString(w, `{"status":"ready","checks":{"db":"ok"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func TestRequestOptions(t *testing.T) {
	srv, s := recorder(t, nil)
	o := opts(t, srv.URL+"/health", "", nil)
	o.Method = "POST"
	o.Body = []byte("ping=1")
	o.Header.Set("X-Probe", "a, b")
	o.Host = "app.example"
	o.User, o.Password, o.HasUser = "admin", "pw", true
	o.Expect.JSON = []expect.JSONExpect{{Path: "status", Value: "ready"}, {Path: "checks.db", Value: "ok"}}
	o.Expect.HeaderRE = []expect.HeaderExpect{{Name: "X-Version", RE: regexp.MustCompile(`^1\.`)}}
	o.Expect.BodyRegex = []*regexp.Regexp{regexp.MustCompile(`"ready"`)}
	r := probe.Run(context.Background(), o)
	if r.Reason != classify.OK {
		t.Fatalf("reason %s: %s", r.Reason, r.Error)
	}
	got := s.reqs[0]
	if got.Method != "POST" || s.body[0] != "ping=1" || got.Host != "app.example" ||
		got.Header.Get("X-Probe") != "a, b" || got.UserAgent() != "healthctl/test" {
		t.Errorf("request: %s host=%q body=%q x-probe=%q ua=%q", got.Method, got.Host, s.body[0], got.Header.Get("X-Probe"), got.UserAgent())
	}
	if u, p, ok := got.BasicAuth(); !ok || u != "admin" || p != "pw" {
		t.Errorf("basic auth %q %q %v", u, p, ok)
	}
	if got.Header.Get("Connection") != "close" {
		t.Errorf("keep-alive not off: Connection %q", got.Header.Get("Connection"))
	}
}

func TestConditionsFail(t *testing.T) {
	srv, _ := recorder(t, nil)
	for name, mod := range map[string]func(*scheme.Options){
		"json": func(o *scheme.Options) { o.Expect.JSON = []expect.JSONExpect{{Path: "status", Value: "up"}} },
		"header": func(o *scheme.Options) {
			o.Expect.HeaderRE = []expect.HeaderExpect{{Name: "X-Version", RE: regexp.MustCompile(`^2\.`)}}
		},
		"regex":  func(o *scheme.Options) { o.Expect.BodyRegex = []*regexp.Regexp{regexp.MustCompile(`starting`)} },
		"status": func(o *scheme.Options) { o.Expect.Status, _ = expect.ParseStatusSet("204") },
	} {
		t.Run(name, func(t *testing.T) {
			o := opts(t, srv.URL, "", nil)
			mod(o)
			r := probe.Run(context.Background(), o)
			want := classify.ConditionFailed
			if name == "status" {
				want = classify.HTTPStatus
			}
			if r.Reason != want || r.Error == "" {
				t.Errorf("reason %s error %q, want %s with a message", r.Reason, r.Error, want)
			}
		})
	}
}

// TestFollowDropsCredentialsAcrossHosts: --follow keeps Authorization on
// the same host and drops it (and cookies) on another.
func TestFollowDropsCredentialsAcrossHosts(t *testing.T) {
	other, seenOther := recorder(t, nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(other.URL, "http://"))
	first, seenFirst := recorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/again", http.StatusFound)
			return
		}
		// localhost is another host name for the same loopback server.
		http.Redirect(w, r, "http://localhost:"+port+"/health", http.StatusFound)
	})
	o := opts(t, first.URL+"/start", "", nil)
	o.Follow = 5
	o.Header.Set("Authorization", "Bearer s3cret")
	o.Header.Set("Cookie", "a=b")
	r := probe.Run(context.Background(), o)
	if r.Reason != classify.OK {
		t.Fatalf("reason %s: %s", r.Reason, r.Error)
	}
	if len(seenFirst.reqs) != 2 || seenFirst.reqs[1].Header.Get("Authorization") == "" {
		t.Errorf("same-host hop lost Authorization")
	}
	if h := seenOther.reqs[0].Header; h.Get("Authorization") != "" || h.Get("Cookie") != "" {
		t.Errorf("credentials crossed hosts: %v", h)
	}

	// Without --follow the first redirect is reported.
	o.Follow = 0
	r = probe.Run(context.Background(), o)
	if r.Reason != classify.Redirect || r.Redirect == nil || r.Redirect.OtherHost {
		t.Errorf("got %s %+v", r.Reason, r.Redirect)
	}
}

func TestResolveAndIPv6(t *testing.T) {
	srv, _ := recorder(t, nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	o := opts(t, "http://nowhere.invalid:"+port+"/", "127.0.0.1:1", nil)
	o.Resolve["nowhere.invalid:"+port] = []string{"127.0.0.1"}
	r := probe.Run(context.Background(), o)
	if r.Reason != classify.OK || r.Address != "127.0.0.1:"+port || r.IPFamily != 4 {
		t.Fatalf("--resolve: %s %s %s", r.Reason, r.Address, r.Error)
	}
	if _, ok := r.Timings.Get(probe.PhaseDNS); ok {
		t.Errorf("dns phase recorded although --resolve skipped it")
	}

	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	s6 := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})}}
	s6.Start()
	defer s6.Close()
	o = opts(t, s6.URL+"/", "", nil)
	r = probe.Run(context.Background(), o)
	if r.Reason != classify.OK || r.IPFamily != 6 {
		t.Fatalf("IPv6 literal: %s family %d %s", r.Reason, r.IPFamily, r.Error)
	}
	o.Network = "tcp4"
	if r = probe.Run(context.Background(), o); r.Outcome == classify.Pass {
		t.Errorf("-4 reached an IPv6 literal")
	}
}

func TestBodyCapIsNotAFailure(t *testing.T) {
	srv, _ := recorder(t, func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, strings.Repeat("x", 10000)+"ready")
	})
	o := opts(t, srv.URL, "", nil)
	o.MaxBody = 1024
	r := probe.Run(context.Background(), o)
	if r.Reason != classify.OK || !r.BodyTruncated {
		t.Errorf("reason %s truncated %v", r.Reason, r.BodyTruncated)
	}
	o.Expect.BodyText = []string{"ready"} // beyond the cap: not seen
	if r = probe.Run(context.Background(), o); r.Reason != classify.ConditionFailed {
		t.Errorf("reason %s, want condition_failed beyond the cap", r.Reason)
	}
}

func TestStatusSet(t *testing.T) {
	for spec, codes := range map[string]map[int]bool{
		"2xx":         {200: true, 299: true, 300: false, 199: false},
		"200-399":     {200: true, 302: true, 399: true, 400: false},
		"200,204,5xx": {200: true, 204: true, 503: true, 201: false},
	} {
		s, err := expect.ParseStatusSet(spec)
		if err != nil {
			t.Fatal(err)
		}
		for c, want := range codes {
			if s.Contains(c) != want {
				t.Errorf("%s contains %d: %v", spec, c, !want)
			}
		}
	}
	for _, bad := range []string{"", "abc", "600", "399-200", "2xx,", "7xx"} {
		if _, err := expect.ParseStatusSet(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRedactor(t *testing.T) {
	r := redact.NewRedactor([]string{"X-Custom"}, []string{"session"})
	u := mustURL(t, "https://bob:hunter22@h.example/p?token=abc123&x=1&session=zzz999&Key=k9k9")
	r.AddURL(u)
	got := r.URL(u)
	want := "https://bob:***@h.example/p?token=***&x=1&session=***&Key=***"
	if got != want {
		t.Errorf("URL:\n got %s\nwant %s", got, want)
	}
	if s := r.String(`Get "https://bob:hunter22@h.example/?token=abc123": boom`); strings.Contains(s, "hunter22") || strings.Contains(s, "abc123") {
		t.Errorf("String leaked: %s", s)
	}
	if !r.IsSecretHeader("x-custom") || !r.IsSecretHeader("authorization") || r.IsSecretHeader("Accept") {
		t.Errorf("secret headers wrong")
	}
}

// TestProxy: a forward proxy on loopback is used for loopback targets too
// (as curl does), NO_PROXY and --noproxy bypass it, and a CONNECT the proxy
// rejects is proxy_error.
func TestProxy(t *testing.T) {
	target, seenTarget := recorder(t, nil)
	var mu sync.Mutex
	var via []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		via = append(via, r.Method+" "+r.RequestURI)
		mu.Unlock()
		if r.Method == http.MethodConnect {
			http.Error(w, "no tunnels here", http.StatusForbidden)
			return
		}
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(proxy.Close)
	env := func(noProxy string) func(string) string {
		return func(k string) string {
			switch k {
			case "http_proxy", "HTTPS_PROXY":
				return proxy.URL
			case "NO_PROXY":
				return noProxy
			}
			return ""
		}
	}

	o := opts(t, target.URL+"/health", "", nil)
	o.Proxy = proxyenv.FromEnv(env(""), "")
	if r := probe.Run(context.Background(), o); r.Reason != classify.OK || len(via) != 1 || !strings.HasPrefix(via[0], "GET http://127.0.0.1") {
		t.Fatalf("through proxy: %s %s, proxy saw %v", r.Reason, r.Error, via)
	}
	for _, np := range []string{"127.0.0.1", "127.0.0.0/8", "*"} {
		o.Proxy = proxyenv.FromEnv(env(np), "")
		probe.Run(context.Background(), o)
		o.Proxy = proxyenv.FromEnv(env(""), np) // --noproxy
		probe.Run(context.Background(), o)
	}
	if len(via) != 1 || len(seenTarget.reqs) != 7 {
		t.Errorf("NO_PROXY/--noproxy not honoured: proxy saw %d, target %d", len(via), len(seenTarget.reqs))
	}

	o = opts(t, "https://app.invalid:1/health", "", nil)
	o.Proxy = proxyenv.FromEnv(env(""), "")
	if r := probe.Run(context.Background(), o); r.Reason != classify.ProxyRefused {
		t.Errorf("rejected CONNECT: %s %s", r.Reason, r.Error)
	}
}
