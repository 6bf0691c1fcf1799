package listen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/listen/board"
	"github.com/healthctl/healthctl/internal/metrics"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/target"
)

// TestBudget: blackbox's rule, the scrape's timeout less half a second, or
// the module's timeout when set and shorter.
func TestBudget(t *testing.T) {
	for _, c := range []struct {
		header string
		module time.Duration
		want   time.Duration
	}{
		{"3", 0, 2500 * time.Millisecond},
		{"13", 30 * time.Second, 12500 * time.Millisecond}, // a 30s module answers before a 13s scrape's deadline
		{"13", 5 * time.Second, 5 * time.Second},
		{"10", 0, 9500 * time.Millisecond},
		{"", 0, NoScrapeTimeout - ScrapeOffset},
		{"", 30 * time.Second, 30 * time.Second},
		{"", 300 * time.Second, NoScrapeTimeout - ScrapeOffset},
		{"0", 0, NoScrapeTimeout - ScrapeOffset},
		{" 2.5 ", 0, 2 * time.Second},
		{"0.3", 0, MinBudget},
		{"0.3", 2 * time.Second, 2 * time.Second},
		{"1e9", 0, MaxBudget},
		{"1e9", time.Hour, MaxBudget},
	} {
		got, err := Budget(c.header, c.module)
		if err != nil || got != c.want {
			t.Errorf("Budget(%q, %v) = %v, %v; want %v", c.header, c.module, got, err, c.want)
		}
	}
	for _, bad := range []string{"x", "-1", "NaN", "+Inf", "3s", strings.Repeat("9", 200) + "x"} {
		if _, err := Budget(bad, 0); err == nil || len(err.Error()) > 120 {
			t.Errorf("Budget(%q): %v, want a short error", bad, err)
		}
	}
}

// TestProbeWindowsFitBudget: a module without timeout: gets the scrape's
// budget in every window (not the flags' 2 s read window); one with a
// longer timeout is cut to the budget; what a wait for a slot took comes
// out of it.
func TestProbeWindowsFitBudget(t *testing.T) {
	mods, err := blackbox.ParseModules("bb.yml", []byte("modules:\n  tcp:\n    prober: tcp\n  long:\n    prober: http\n    timeout: 30s\n"), target.Defaults(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		module, header string
		want           time.Duration
	}{
		{"tcp", "10", 9500 * time.Millisecond},
		{"tcp", "3", 2500 * time.Millisecond},
		{"long", "13", 12500 * time.Millisecond},
		{"long", "", 30 * time.Second},
	} {
		m := mods[c.module]
		b, err := Budget(c.header, m.Timeout)
		if err != nil {
			t.Fatal(err)
		}
		o, err := m.Options("127.0.0.1:9", b)
		if err != nil {
			t.Fatal(err)
		}
		if o.MaxTime != c.want || o.ConnectTimeout != c.want || o.ReadTimeout != c.want {
			t.Errorf("%s, header %q: max %v connect %v read %v; want %v each", c.module, c.header, o.MaxTime, o.ConnectTimeout, o.ReadTimeout, c.want)
		}
		fit(o, time.Second)
		if o.MaxTime != time.Second || o.ConnectTimeout != time.Second || o.ReadTimeout != time.Second {
			t.Errorf("%s: 1s left of the budget: max %v connect %v read %v", c.module, o.MaxTime, o.ConnectTimeout, o.ReadTimeout)
		}
	}
}

// serve runs h on a loopback server of Server's shape with maxConns,
// changed by each of change.
func serve(t *testing.T, h http.Handler, maxConns int, change ...func(*http.Server)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, l := Server(h, ln, maxConns)
	for _, c := range change {
		c(srv)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// slowTarget is a loopback HTTP server whose answers wait for release;
// inflight counts the requests waiting.
func slowTarget(t *testing.T) (u *url.URL, inflight *atomic.Int32, release func()) {
	t.Helper()
	inflight = &atomic.Int32{}
	ch := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inflight.Add(1)
		select {
		case <-ch:
		case <-r.Context().Done():
		}
		io.WriteString(w, "ok\n")
	}))
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(func() { release(); ts.Close() })
	u, _ = url.Parse(ts.URL + "/health")
	return u, inflight, release
}

// waitFor polls cond (every 5 ms, at most 20 s: a guard, not a bound the
// test asserts).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// TestHealthzNotBehindSlowProbes: 40 /probe scrapes of a target that
// answers only when the test lets it, against 8 probe slots (8 probing,
// 32 waiting for a slot): /healthz, /metrics and the page answer while
// every one of the 40 is still in flight; then the 40 all answer
// probe_success 1.
func TestHealthzNotBehindSlowProbes(t *testing.T) {
	u, inflight, release := slowTarget(t)
	mods, err := blackbox.DefaultModules(target.Defaults(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	svc := New(Config{Interval: time.Minute, Probe: probe.Run, Modules: mods, Allow: allow, ProbeConcurrency: 8})
	publish(t, svc, sweepInput(1, "stay"))
	var entered, answered atomic.Int32
	h := svc.Handler()
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/probe" {
			entered.Add(1)
		}
		h.ServeHTTP(w, r)
	}), MaxConns(1<<20))

	const n = 40
	var wg sync.WaitGroup
	bodies := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 60 * time.Second}
			resp, err := c.Get("http://" + addr + "/probe?target=" + url.QueryEscape(u.String()))
			if err != nil {
				bodies[i] = err.Error()
				answered.Add(1)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			bodies[i] = string(b)
			answered.Add(1)
		}()
	}
	waitFor(t, "40 /probe requests in, 8 probing", func() bool { return entered.Load() == n && inflight.Load() == 8 })
	for _, path := range []string{"/healthz", "/metrics", "/", "/status.json"} {
		c := &http.Client{Timeout: 20 * time.Second}
		resp, err := c.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("%s behind 40 slow /probe: %v", path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
	if a := answered.Load(); a != 0 {
		t.Fatalf("%d of the slow /probe scrapes answered before /healthz did: the test proves nothing", a)
	}
	if p := inflight.Load(); p != 8 {
		t.Errorf("%d probes in flight: want the 8 slots' worth", p)
	}
	release()
	wg.Wait()
	for i, b := range bodies {
		if !strings.Contains(b, "\nprobe_success 1\n") {
			t.Errorf("scrape %d: %q", i, b)
		}
	}
}

// TestKeepAliveConnsAnswered: 20 clients each keep a connection alive
// between requests (a scraper's pool) against a server that holds 8 and
// (here) never times an idle connection out: each request is answered,
// on its kept connection or, once that was closed for a new client, on a
// fresh one. (Capping connections alone parked the 9th client until an
// idle one timed out.)
func TestKeepAliveConnsAnswered(t *testing.T) {
	svc := New(Config{Interval: time.Minute})
	publish(t, svc, sweepInput(1, "stay"))
	addr := serve(t, svc.Handler(), 8, func(s *http.Server) { s.IdleTimeout = time.Hour })
	var clients []*http.Client
	for range 20 {
		clients = append(clients, &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 20 * time.Second})
	}
	for round := range 3 {
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := c.Get("http://" + addr + "/metrics")
				if err != nil {
					t.Errorf("round %d, client %d: %v", round, i, err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("round %d, client %d: %d", round, i, resp.StatusCode)
				}
			}()
			if round == 0 {
				wg.Wait() // first round: one after the other, each left idle
			}
		}
		wg.Wait()
	}
}

// TestProbeBusy: with every probe slot taken for a scrape's whole budget,
// /probe answers probe_success 0 and why (never a hang, never nothing).
func TestProbeBusy(t *testing.T) {
	mods, _ := blackbox.DefaultModules(target.Defaults(), func(string) string { return "" })
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	started := make(chan struct{}, 1)
	hold := make(chan struct{})
	defer close(hold)
	slow := func(ctx context.Context, _ *scheme.Options) probe.Result {
		started <- struct{}{}
		select {
		case <-hold:
		case <-ctx.Done():
		}
		return probe.Result{Outcome: classify.Pass, Reason: classify.OK}
	}
	svc := New(Config{Interval: time.Minute, Probe: slow, Modules: mods, Allow: allow, ProbeConcurrency: 1})
	h := svc.Handler()
	go get(t, h, "/probe?target=127.0.0.1:1/")
	<-started
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/probe?target=127.0.0.1:1/", nil)
	req.Header.Set(ScrapeTimeoutHeader, "0.7")
	h.ServeHTTP(rec, req)
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, "\nprobe_success 0\n") || !strings.Contains(body, `healthctl_probe_not_started{why="busy"} 1`) {
		t.Errorf("busy: %d\n%s", rec.Code, body)
	}
	checkExposition(t, body)
}

func openFDs(t *testing.T) int {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(ents)
}

// TestConnsBounded: 100 clients that connect and send nothing hold at most
// maxConns of the server's descriptors (the rest wait in the kernel's
// queue); each is dropped by the header timeout, and a scrape then gets
// its answer.
func TestConnsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, l := Server(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "probe_success 1\n")
	}), ln, 8)
	srv.ReadHeaderTimeout = 300 * time.Millisecond
	go srv.Serve(l)
	defer srv.Close()

	before := openFDs(t)
	var idle []net.Conn
	for range 100 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond) // let the server accept what it will
	if grew := openFDs(t) - before - len(idle); grew > 8+2 {
		t.Errorf("100 silent clients took %d server descriptors, want at most 8", grew)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the scrape behind 100 silent clients: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "probe_success") {
		t.Fatalf("got %q", b)
	}
}

func TestMaxConns(t *testing.T) {
	for nofile, want := range map[uint64]int{0: 8, 64: 8, 128: 16, 1024: 240, 1 << 20: 4096} {
		if got := MaxConns(nofile); got != want {
			t.Errorf("MaxConns(%d) = %d, want %d", nofile, got, want)
		}
	}
}

// checkExposition fails t unless body parses as the text exposition.
func checkExposition(t *testing.T, body string) {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := p.TextToMetricFamilies(strings.NewReader(body)); err != nil {
		t.Errorf("does not parse: %v\n%s", err, body)
	}
}

// TestMetricsUnreadableIsAFailedScrape: fleet series that cannot be read
// back answer 500 (Prometheus: up == 0), not a 200 without the targets.
func TestMetricsUnreadableIsAFailedScrape(t *testing.T) {
	svc := New(Config{Interval: time.Minute})
	svc.board.Publish(metrics.Input{}, []byte("not gzip"), time.Now(), board.Lines{})
	rec := httptest.NewRecorder()
	svc.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status %d, want 500:\n%s", rec.Code, rec.Body)
	}
}
