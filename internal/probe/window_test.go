package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

func testOptions(t *testing.T, raw, dns string) *scheme.Options {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return &scheme.Options{
		URL: u, Method: "GET", Header: http.Header{}, UserAgent: "healthctl/test",
		Network: "tcp", Resolve: map[string][]string{}, DNSServer: dns, TLSConfig: &tls.Config{},
		ConnectTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second,
		MaxTime: 4 * time.Second, MaxBody: 64 << 10, Redactor: redact.NewRedactor(nil, nil),
	}
}

// TestLateWindowDoesNotCount: a window that closes between the last body
// byte and the judgement (here: --max-time fired by hand at that moment) does
// not turn a finished probe into body_timeout at stage done.
func TestLateWindowDoesNotCount(t *testing.T) {
	s, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fired := false
	late := hooks{AfterBody: func(p *session.Probe) {
		p.Mu.Lock()
		gen := p.MaxWin.Gen
		p.Mu.Unlock()
		p.Fire(&p.MaxWin, gen)
		fired = true
	}}
	r := newRun(testOptions(t, s.URL, ""), late).do(context.Background())
	if !fired {
		t.Fatal("the hook did not run")
	}
	if r.Reason != classify.OK || r.Error != "" {
		t.Errorf("got %s %q after a window closed past the last byte, want ok", r.Reason, r.Error)
	}
}

// TestTinyWindows runs tiny windows many times against real loopback
// servers: the reason is always the stage that was running, consistent with
// the waterfall, and the error text is never empty or the wrong phase.
func TestTinyWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("loop test")
	}
	dns, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hang, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Mode: fixture.ModeHang})
	if err != nil {
		t.Fatal(err)
	}
	// text says which error text each reason must have.
	text := map[classify.Reason]string{
		classify.DNSTimeout:     "DNS lookup of ",
		classify.ConnectTimeout: "TCP connect ",
		classify.HeadersTimeout: "no response headers within ",
		classify.BodyTimeout:    "response body not complete within ",
	}
	cases := []struct {
		name    string
		url     string
		connect time.Duration
		max     time.Duration
		allowed []classify.Reason
	}{
		// A timer whose goroutine runs only after the connection was made
		// (or the probe finished) counts for nothing: ok is allowed.
		{"connect 1ns by IP", ok.URL, time.Nanosecond, 0, []classify.Reason{classify.ConnectTimeout, classify.OK}},
		{"connect 1ns by name", "http://app.invalid:" + portOf(ok.URL), time.Nanosecond, 0, []classify.Reason{classify.DNSTimeout, classify.ConnectTimeout, classify.OK}},
		{"connect 100us", ok.URL, 100 * time.Microsecond, 0, []classify.Reason{classify.OK, classify.ConnectTimeout}},
		{"max-time 3ms hang", hang.URL, 0, 3 * time.Millisecond, []classify.Reason{classify.ConnectTimeout, classify.HeadersTimeout}},
		{"max-time 3ms ok", ok.URL, 0, 3 * time.Millisecond, []classify.Reason{classify.OK, classify.ConnectTimeout, classify.HeadersTimeout, classify.BodyTimeout}},
		{"max-time 1ns", ok.URL, 0, time.Nanosecond, []classify.Reason{classify.ConnectTimeout, classify.HeadersTimeout, classify.BodyTimeout, classify.OK}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seen := map[classify.Reason]int{}
			for i := 0; i < 40; i++ {
				o := testOptions(t, c.url, dns.Addr)
				if c.connect > 0 {
					o.ConnectTimeout = c.connect
				}
				if c.max > 0 {
					o.MaxTime = c.max
				}
				r := Run(context.Background(), o)
				seen[r.Reason]++
				allowed := false
				for _, a := range c.allowed {
					allowed = allowed || a == r.Reason
				}
				if !allowed {
					t.Fatalf("run %d: reason %s (%q), want one of %v", i, r.Reason, r.Error, c.allowed)
				}
				if r.Reason == classify.OK {
					continue
				}
				if want := text[r.Reason]; !strings.HasPrefix(r.Error, want) || strings.HasPrefix(r.Error, " ") {
					t.Fatalf("run %d: %s with error %q, want it to start %q", i, r.Reason, r.Error, want)
				}
				// A phase the reason says did not finish is not followed
				// by a later phase in the waterfall.
				_, connected := r.Timings.Get(PhaseConnect)
				_, answered := r.Timings.Get(PhaseTTFB)
				switch r.Reason {
				case classify.DNSTimeout:
					if connected || answered {
						t.Fatalf("run %d: %s but later phases recorded: %v", i, r.Reason, r.Timings)
					}
				case classify.ConnectTimeout:
					if answered {
						t.Fatalf("run %d: %s but ttfb recorded: %v", i, r.Reason, r.Timings)
					}
				case classify.HeadersTimeout:
					if !connected {
						t.Fatalf("run %d: %s but no connect recorded: %v", i, r.Reason, r.Timings)
					}
				}
			}
			t.Logf("reasons: %v", seen)
		})
	}
}

func portOf(u string) string { return u[strings.LastIndex(u, ":")+1:] }

// TestWindowAfterHeadersIsBody: HTTP/2 hands the headers over, and the read
// window closes before the body stage is entered (fired by hand at that
// moment): the headers had arrived, so it is body_timeout with the status,
// and ttfb is in the waterfall.
func TestWindowAfterHeadersIsBody(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	defer close(release)
	o := testOptions(t, srv.URL+"/health", "")
	o.TLSConfig.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	fired := false
	early := hooks{AfterHeaders: func(p *session.Probe) {
		p.Mu.Lock()
		gen := p.ReadWin.Gen
		p.Mu.Unlock()
		p.Fire(&p.ReadWin, gen)
		fired = true
	}}
	r := newRun(o, early).do(context.Background())
	if !fired {
		t.Fatal("the hook did not run")
	}
	if r.HTTPVersion != "HTTP/2.0" {
		t.Errorf("HTTP version %q, want HTTP/2.0", r.HTTPVersion)
	}
	if r.Reason != classify.BodyTimeout || r.HTTPStatus != 200 {
		t.Errorf("got %s with status %d (%q), want body_timeout with 200", r.Reason, r.HTTPStatus, r.Error)
	}
	if _, ok := r.Timings.Get(PhaseTTFB); !ok {
		t.Errorf("ttfb missing: %v", r.Timings)
	}
}

// TestHeadersTimeoutShowsTheWait: a server that never answers: the
// headers_timeout waterfall has the ttfb phase, cut short at the window.
func TestHeadersTimeoutShowsTheWait(t *testing.T) {
	hang, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Mode: fixture.ModeHang})
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, hang.URL+"/health", "")
	o.ReadTimeout = 300 * time.Millisecond
	r := Run(context.Background(), o)
	if r.Reason != classify.HeadersTimeout {
		t.Fatalf("got %s (%q), want headers_timeout", r.Reason, r.Error)
	}
	if d, ok := r.Timings.Get(PhaseTTFB); !ok || d < 250*time.Millisecond {
		t.Errorf("ttfb %v (present %v), want about the 300ms window: %v", d, ok, r.Timings)
	}
}

// TestNoGoInternalNames: a server that resets the connection before any
// answer: the error text has no Go function name in it.
func TestNoGoInternalNames(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 4096)
		c.Read(buf)
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}()
	r := Run(context.Background(), testOptions(t, "http://"+l.Addr().String()+"/health", ""))
	if r.Reason != classify.ConnReset {
		t.Fatalf("got %s (%q), want conn_reset", r.Reason, r.Error)
	}
	if strings.Contains(r.Error, "readLoop") || !strings.Contains(r.Error, "reset") {
		t.Errorf("error %q names Go internals or no reset", r.Error)
	}
	for in, want := range map[string]string{
		"readLoopPeekFailLocked: read tcp 1.2.3.4:5: connection reset by peer": "read tcp 1.2.3.4:5: connection reset by peer",
		"net/http: persistConn.writeLoop: broken pipe":                         "net/http: broken pipe",
		"dial tcp4 127.0.0.1:1: connect: connection refused":                   "dial tcp4 127.0.0.1:1: connect: connection refused",
	} {
		if got := classify.ErrorText(errors.New(in)); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}
