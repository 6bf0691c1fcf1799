package httpprobe

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/hostile"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// rawAnswer is a hostile (or plain) server's answer to the request it read:
// what it does to the connection.
type rawAnswer func(c net.Conn, done <-chan struct{})

func write(s string) rawAnswer {
	return func(c net.Conn, _ <-chan struct{}) { c.Write([]byte(s)) }
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

// TestHTTP1MatchesTransport: the HTTP/1.1 exchange and net/http's Transport,
// probing the same servers (well-behaved and hostile), give the same
// result — outcome, reason, sentence, status, phases recorded — and send
// the server the same bytes.
func TestHTTP1MatchesTransport(t *testing.T) {
	gz := gzipped("ok\n")
	cases := []struct {
		name    string
		answer  rawAnswer
		reason  classify.Reason
		method  string
		header  http.Header
		body    []byte
		timeout time.Duration
	}{
		{name: "ok", answer: write("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"), reason: classify.OK},
		{name: "ok close-delimited", answer: write("HTTP/1.1 200 OK\r\n\r\nok\n"), reason: classify.OK},
		{name: "chunked", answer: write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nok\n\r\n0\r\n\r\n"), reason: classify.OK},
		{name: "bad chunked", answer: write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\n\r\n")},
		{name: "503", answer: write("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n"), reason: classify.HTTPStatus},
		{name: "302 not followed", answer: write("HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n")},
		{name: "bad location", answer: write("HTTP/1.1 302 Found\r\nLocation: http://[::1\r\nContent-Length: 0\r\n\r\n")},
		{name: "head", method: "HEAD", answer: write("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"), reason: classify.OK},
		{name: "post body", method: "POST", body: []byte("a=1"), answer: write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), reason: classify.OK},
		{name: "headers", header: http.Header{"X-A": {"1"}, "Accept": {"a, b"}, "Range": {"bytes=0-1"}}, answer: write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), reason: classify.OK},
		{name: "own accept-encoding", header: http.Header{"Accept-Encoding": {"gzip"}}, answer: write("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\n\r\n")},
		{name: "gzip", answer: write("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + strconv.Itoa(len(gz)) + "\r\n\r\n" + string(gz)), reason: classify.OK},
		{name: "corrupt gzip", answer: write("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\nnotgz")},
		{name: "103 then 200", answer: write("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), reason: classify.OK},
		{name: "101", answer: write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n"), reason: classify.HTTPStatus},
		{name: "close before answer", answer: func(net.Conn, <-chan struct{}) {}},
		{name: "reset before answer", answer: func(c net.Conn, _ <-chan struct{}) { c.(*net.TCPConn).SetLinger(0) }},
		{name: "bad status line", answer: write("HTTP/1.1 abc OK\r\n\r\n")},
		{name: "not http", answer: write("SSH-2.0-OpenSSH_9.6\r\n\r\n")},
		{name: "close mid-headers", answer: write("HTTP/1.1 200 OK\r\nContent-Le")},
		{name: "malformed header", answer: write("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n")},
		{name: "short body", answer: write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok\n")},
		{name: "1xx forever", answer: func(c net.Conn, done <-chan struct{}) {
			for i := 0; i < 200000; i++ {
				if _, err := c.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n")); err != nil {
					return
				}
			}
		}},
		{name: "huge headers", answer: func(c net.Conn, _ <-chan struct{}) {
			c.Write([]byte("HTTP/1.1 200 OK\r\n"))
			line := []byte("X-Pad: " + strings.Repeat("p", 1000) + "\r\n")
			for i := 0; i < 1200; i++ {
				if _, err := c.Write(line); err != nil {
					return
				}
			}
		}},
		{name: "trickled headers", timeout: 300 * time.Millisecond, reason: classify.HeadersTimeout, answer: func(c net.Conn, done <-chan struct{}) {
			for _, b := range []byte("HTTP/1.1 200 OK\r\nX-Slow: ...........................\r\n\r\n") {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				select {
				case <-done:
					return
				case <-time.After(40 * time.Millisecond):
				}
			}
		}},
		{name: "silence", timeout: 300 * time.Millisecond, reason: classify.HeadersTimeout, answer: func(c net.Conn, done <-chan struct{}) {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
			}
		}},
		{name: "endless body", timeout: 300 * time.Millisecond, reason: classify.BodyTimeout, answer: func(c net.Conn, done <-chan struct{}) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nok"))
			select {
			case <-done:
			case <-time.After(5 * time.Second):
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			srv, err := hostile.NewRawServer(t, nil, func(c net.Conn, done <-chan struct{}) {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				var raw bytes.Buffer
				req.Write(&raw)
				mu.Lock()
				seen = append(seen, raw.String())
				mu.Unlock()
				tc.answer(c, done)
			})
			if err != nil {
				t.Fatal(err)
			}
			results := make([]result.Result, 2)
			for i, only := range []bool{false, true} {
				o := plainOpts(t, "http://"+srv.Addr+"/health")
				if tc.method != "" {
					o.Method = tc.method
				}
				if tc.header != nil {
					o.Header = tc.header
				}
				o.Body = tc.body
				if tc.timeout > 0 {
					o.ReadTimeout = tc.timeout
				}
				p := newRun(o, hooks{Transport: only})
				if !only && !HTTP1Fits(p.Probe) {
					t.Fatal("the HTTP/1.1 exchange does not take this probe")
				}
				results[i] = p.do(context.Background())
			}
			plain, tr := results[0], results[1]
			t.Logf("%s: %s", plain.Reason, plain.Error)
			// The local port is the connection's own.
			plain.Error = localPort.ReplaceAllString(plain.Error, "->")
			tr.Error = localPort.ReplaceAllString(tr.Error, "->")
			if tc.reason != "" && plain.Reason != tc.reason {
				t.Errorf("reason %s (%s), want %s", plain.Reason, plain.Error, tc.reason)
			}
			if plain.Outcome != tr.Outcome || plain.Reason != tr.Reason || plain.Error != tr.Error ||
				plain.HTTPStatus != tr.HTTPStatus || plain.HTTPVersion != tr.HTTPVersion ||
				plain.BodyTruncated != tr.BodyTruncated || plain.Address != tr.Address {
				t.Errorf("plain:     %s %s %q status %d %s trunc %v addr %s\ntransport: %s %s %q status %d %s trunc %v addr %s",
					plain.Outcome, plain.Reason, plain.Error, plain.HTTPStatus, plain.HTTPVersion, plain.BodyTruncated, plain.Address,
					tr.Outcome, tr.Reason, tr.Error, tr.HTTPStatus, tr.HTTPVersion, tr.BodyTruncated, tr.Address)
			}
			if (plain.Redirect == nil) != (tr.Redirect == nil) || (plain.Redirect != nil && *plain.Redirect != *tr.Redirect) {
				t.Errorf("redirect: plain %+v, transport %+v", plain.Redirect, tr.Redirect)
			}
			if pk, tk := phases(plain.Timings), phases(tr.Timings); !slices.Equal(pk, tk) {
				t.Errorf("phases: plain %v, transport %v", pk, tk)
			}
			if tc.name == "trickled headers" {
				// Headers begun and never finished: said so, and the
				// wait after the first byte is in the transfer phase.
				for _, r := range []result.Result{plain, tr} {
					if !strings.Contains(r.Error, "response headers begun but not complete within --read-timeout") {
						t.Errorf("error %q: want it to say the headers had begun", r.Error)
					}
					if d, ok := r.Timings.Get(result.PhaseTransfer); !ok || d < tc.timeout/2 {
						t.Errorf("transfer phase %v (%v): want the wait after the first byte", d, ok)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 2 || seen[0] != seen[1] {
				t.Errorf("requests differ:\nplain:     %q\ntransport: %q", at(seen, 0), at(seen, 1))
			}
		})
	}
}

var localPort = regexp.MustCompile(`:[0-9]+->`)

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

func phases(t result.Timings) []result.Phase {
	var ps []result.Phase
	for p := range t.All() {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

func plainOpts(t *testing.T, raw string) *scheme.Options {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	red := redact.NewRedactor(nil, nil)
	red.AddURL(u)
	return &scheme.Options{
		URL: u, Method: "GET", Header: http.Header{}, UserAgent: "healthctl/test",
		Network: "tcp", Resolve: map[string][]string{},
		ConnectTimeout: 500 * time.Millisecond, ReadTimeout: 2 * time.Second,
		MaxTime: 5 * time.Second, MaxBody: 1 << 20, Redactor: red,
	}
}

// TestHTTP1FitsPicks: only the common case takes the HTTP/1.1 exchange; every
// probe that needs what the Transport does (TLS, a proxy, redirects, h2c,
// its rules about connection headers) keeps it.
func TestHTTP1FitsPicks(t *testing.T) {
	proxy := func(*url.URL) (*url.URL, error) { return url.Parse("http://127.0.0.1:3128") }
	noProxy := func(*url.URL) (*url.URL, error) { return nil, nil }
	cases := []struct {
		name string
		url  string
		set  func(o *scheme.Options)
		want bool
	}{
		{"plain", "http://127.0.0.1:1/health", nil, true},
		{"proxy function says none", "http://127.0.0.1:1/health", func(o *scheme.Options) { o.Proxy = noProxy }, true},
		{"https", "https://127.0.0.1:1/health", nil, false},
		{"proxied", "http://127.0.0.1:1/health", func(o *scheme.Options) { o.Proxy = proxy }, false},
		{"follow", "http://127.0.0.1:1/health", func(o *scheme.Options) { o.Follow = 3 }, false},
		{"h2c", "http://127.0.0.1:1/health", func(o *scheme.Options) { o.HTTP2PriorKnowledge = true }, false},
		{"connection header", "http://127.0.0.1:1/health", func(o *scheme.Options) { o.Header.Set("Connection", "keep-alive") }, false},
		{"upgrade header", "http://127.0.0.1:1/health", func(o *scheme.Options) { o.Header.Set("Upgrade", "websocket") }, false},
		{"bad header value", "http://127.0.0.1:1/health", func(o *scheme.Options) { o.Header["X-A"] = []string{"a\x01b"} }, false},
		{"idna host", "http://bücher.invalid/health", nil, false},
	}
	for _, tc := range cases {
		o := plainOpts(t, tc.url)
		if tc.set != nil {
			tc.set(o)
		}
		if got := HTTP1Fits(newRun(o, hooks{}).Probe); got != tc.want {
			t.Errorf("%s: http1Fits = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNewRequestURL: the request NewRequest makes from a copy of the
// options' URL is the one http.NewRequest makes from the URL's text — the
// same URL as every reader sees it, request line and Host — for random and
// hostile URLs.
func TestNewRequestURL(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 4))
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	n := 0
	for range 20000 {
		raw := pick("http://", "https://", "HTTP://", "grpc://") +
			pick("", "u:p@", "u@", "%75:%70@") +
			pick("127.0.0.1:8080", "127.0.0.1:", "[::1]:9", "[::1]:", "[fe80::1%25eth0]:80", "Example.INVALID", "ü.invalid", "a_b.invalid:1", "h.invalid:0080") +
			pick("", "/", "/health", "/a b", "/%zz", "/a%2Fb", "/%41", "/x?y=1&z=%20", "/ü", "/a?b#frag", "/a#", "/?", "/a;b", "/a/../b", "//x", "/a%20b?c=%2", "/~x!$&'()*+,;=:@")
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		o := &scheme.Options{URL: u, Method: pick("GET", "HEAD", "POST"), Header: http.Header{}, UserAgent: "x"}
		got, err := NewRequest(context.Background(), o)
		c := *u
		c.User = nil
		want, werr := http.NewRequest(o.Method, c.String(), nil)
		if (err != nil) != (werr != nil) {
			t.Fatalf("%q: NewRequest error %v, http.NewRequest error %v", raw, err, werr)
		}
		if err != nil {
			continue
		}
		n++
		// RawPath may differ where it is not a valid encoding of Path
		// (a raw "/ü"): every reader of the URL ignores it then.
		seen := func(r *http.Request) []string {
			u := r.URL
			return []string{u.String(), u.RequestURI(), u.EscapedPath(), u.Path, u.Scheme, u.Host, u.RawQuery, u.Fragment,
				u.EscapedFragment(), strconv.FormatBool(u.ForceQuery), r.Host, r.Method}
		}
		if g, w := seen(got), seen(want); !reflect.DeepEqual(g, w) {
			t.Fatalf("%q:\n got %q\nwant %q", raw, g, w)
		}
	}
	if n < 10000 {
		t.Fatalf("only %d URLs compared", n)
	}
}

// TestBackstopInTheStatusLine: when the windows' timer is starved (CPU
// starvation on a loaded machine) the connection's backstop deadline ends
// a status line that trickles in, and it is the read window that closed: a
// headers timeout, never protocol_error. TestHTTP1MatchesTransport's
// trickled headers saw protocol_error in 1 of 15 loaded runs when the
// hand-written answer parser (deleted) read the head; http.ReadResponse
// passes the deadline's error on, and readHead turns any error after the
// backstop into the window's (checked: this test passes without that check
// too — it holds the behaviour, the check keeps it whatever the reader).
func TestBackstopInTheStatusLine(t *testing.T) {
	srv, err := hostile.NewRawServer(t, nil, func(c net.Conn, done <-chan struct{}) {
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		for _, b := range []byte("HTTP/1.1 200 OK trickling its reason phrase for ever........................") {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			select {
			case <-done:
				return
			case <-time.After(30 * time.Millisecond):
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	o := plainOpts(t, "http://"+srv.Addr+"/health")
	o.ReadTimeout = 300 * time.Millisecond
	r := newRun(o, hooks{StarvedTimer: true}).do(context.Background())
	if r.Reason != classify.HeadersTimeout {
		t.Fatalf("%s/%s (%s): want headers_timeout (the backstop is the read window's)", r.Outcome, r.Reason, r.Error)
	}
	if !strings.Contains(r.Error, "--read-timeout 300ms") {
		t.Errorf("error %q: want it to name the read window", r.Error)
	}
}

// A starved timer goroutine (a loaded machine) lets the deadline a window
// set end a connect before the window's timer runs: the result is still the
// window's, its sentence naming the window, never the dialler's bare
// "i/o timeout" (TestTinyWindows saw that once under two CPU hogs).
func TestStarvedTimerConnectDeadline(t *testing.T) {
	bl, err := fixture.NewBacklog(t)
	if err != nil {
		t.Fatal(err)
	}
	o := plainOpts(t, "http://"+bl.Addr+"/health")
	o.MaxTime = 20 * time.Millisecond
	r := newRun(o, hooks{StarvedTimer: true}).do(context.Background())
	if r.Reason != classify.ConnectTimeout {
		t.Fatalf("%s/%s (%s): want connect_timeout", r.Outcome, r.Reason, r.Error)
	}
	if !strings.HasPrefix(r.Error, "TCP connect ") || !strings.Contains(r.Error, "--max-time 20ms") {
		t.Errorf("error %q: want the window's sentence (TCP connect … --max-time 20ms)", r.Error)
	}
}
