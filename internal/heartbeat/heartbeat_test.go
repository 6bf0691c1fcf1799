package heartbeat

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/proxyenv"
)

// TestHeartbeat: against a fake receiver on loopback, a passing sweep is a
// POST to the URL with the sweep's line as its body, a failed one a POST
// to URL/fail; a status= query (Uptime Kuma's push) is a GET with
// status=up or down and msg; a receiver that hangs is given up within the
// timeout; no error repeats the URL (its path is the check's key).
func TestHeartbeat(t *testing.T) {
	type got struct{ method, uri, body string }
	var mu sync.Mutex
	var reqs []got
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/hang/") {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, got{r.Method, r.URL.RequestURI(), string(b)})
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/gone/") {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	defer close(hang) // before Close, which waits for the hanging handler
	ping := func(path string, failed bool, timeout time.Duration) error {
		u, err := Parse(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		p := PingSuccess
		if failed {
			p = PingFail
		}
		return (&Pinger{URL: u, Timeout: timeout}).Ping(context.Background(), p, "sweep 3: 2 targets, 1 pass, 1 fail")
	}
	if err := ping("/ping/KEY-1", false, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := ping("/ping/KEY-1/", true, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := ping("/api/push/KEY-1?status=up&msg=OK&ping=", true, time.Minute); err != nil {
		t.Fatal(err)
	}
	want := []got{
		{"POST", "/ping/KEY-1", "sweep 3: 2 targets, 1 pass, 1 fail\n"},
		{"POST", "/ping/KEY-1/fail", "sweep 3: 2 targets, 1 pass, 1 fail\n"},
		{"GET", "/api/push/KEY-1?msg=sweep+3%3A+2+targets%2C+1+pass%2C+1+fail&ping=&status=down", ""},
	}
	mu.Lock()
	if len(reqs) != len(want) {
		t.Fatalf("requests %+v", reqs)
	}
	for i := range want {
		if reqs[i] != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, reqs[i], want[i])
		}
	}
	mu.Unlock()
	for _, c := range []struct {
		path, want string
	}{{"/gone/KEY-1", "the receiver answered 404"}, {"/hang/KEY-1", "no answer within 200ms"}} {
		start := time.Now()
		err := ping(c.path, false, 200*time.Millisecond)
		if err == nil || err.Error() != c.want || strings.Contains(err.Error(), "KEY-1") {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s: took %s", c.path, d)
		}
	}
	for _, bad := range []string{"ftp://KEY-1/x", "http:///KEY-1", "://KEY-1"} {
		if _, err := Parse(bad); err == nil || strings.Contains(err.Error(), "KEY-1") {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}

// TestHeartbeatStartAndProxy: a start is a POST to URL/start
// (healthchecks.io); Uptime Kuma's push has none (an error, no request);
// the ping goes through the probe's proxy rule — loopback included, as curl
// and healthctl's probes have it, unlike Go's ProxyFromEnvironment — and a
// proxy rule's error never repeats the setting.
func TestHeartbeatStartAndProxy(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.RequestURI)
		mu.Unlock()
	}))
	defer proxy.Close()
	u, err := Parse("http://127.0.0.1:1/ping/KEY-1")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HTTP_PROXY": proxy.URL}
	h := &Pinger{URL: u, Timeout: 5 * time.Second, Proxy: proxyenv.FromEnv(func(k string) string { return env[k] }, "")}
	for _, p := range []Ping{PingStart, PingSuccess, PingFail} {
		if err := h.Ping(context.Background(), p, "sweep 1"); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	want := []string{"POST http://127.0.0.1:1/ping/KEY-1/start", "POST http://127.0.0.1:1/ping/KEY-1", "POST http://127.0.0.1:1/ping/KEY-1/fail"}
	mu.Lock()
	if !slices.Equal(seen, want) {
		t.Errorf("the proxy saw %q, want %q", seen, want)
	}
	mu.Unlock()

	kuma, _ := Parse("http://127.0.0.1:1/api/push/KEY-1?status=up")
	if HasStart(kuma) || !HasStart(u) {
		t.Error("HasStart: Uptime Kuma's push has no start, healthchecks.io has")
	}
	if err := (&Pinger{URL: kuma}).Ping(context.Background(), PingStart, ""); err == nil || strings.Contains(err.Error(), "KEY-1") {
		t.Errorf("a start to Uptime Kuma: %v", err)
	}
	bad := &Pinger{URL: u, Timeout: time.Second, Proxy: func(*url.URL) (*url.URL, error) {
		return nil, errors.New(`parse "http://user:PASS-1@[::1": missing ']'`)
	}}
	if err := bad.Ping(context.Background(), PingSuccess, ""); err == nil || strings.Contains(err.Error(), "PASS-1") {
		t.Errorf("a bad proxy setting: %v", err)
	}
}
