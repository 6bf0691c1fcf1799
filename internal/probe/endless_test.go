package probe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/fixture/proxyfix"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/proxyenv"
	"github.com/healthctl/healthctl/internal/scheme"
)

// TestEndlessBodyBounded: a server whose chunked body never ends (it
// writes as fast as the client reads, for 10 s or 1 GiB at most) is read
// up to --max-body and no further on every path — the plain HTTP/1.1
// exchange, net/http's Transport (-L) and through an HTTP proxy — and
// each says pass with the body truncated. net/http's body, closed early,
// reads a chunked body to its end (GOTCHAS): the HTTP/1.1 exchange once took
// 437 MB in the 2 s of its read window here. What the server could write
// is bounded by the cap and the kernel's socket buffers, a few MiB on
// loopback, never the window's worth.
func TestEndlessBodyBounded(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 32<<10))
		w.Header().Set("Content-Type", "text/plain")
		deadline := time.Now().Add(10 * time.Second)
		for n := 0; n < 1<<30 && time.Now().Before(deadline); n += len(chunk) {
			m, err := w.Write(chunk)
			sent.Add(int64(m))
			if err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	proxy, err := proxyfix.NewHTTPProxy(t)
	if err != nil {
		t.Fatal(err)
	}
	const bound = 24 << 20
	for _, path := range []struct {
		name string
		set  func(*scheme.Options)
	}{
		{"plain", func(*scheme.Options) {}},
		{"transport", func(o *scheme.Options) { o.Follow = 5 }},
		{"proxy", func(o *scheme.Options) {
			o.Proxy = proxyenv.FromEnv(func(k string) string {
				if k == "HTTP_PROXY" {
					return proxy.URL
				}
				return ""
			}, "")
		}},
	} {
		t.Run(path.name, func(t *testing.T) {
			sent.Store(0)
			o := opts(t, srv.URL+"/health", "", nil)
			o.ReadTimeout, o.MaxTime = 2*time.Second, 3*time.Second
			path.set(o)
			r := probe.Run(context.Background(), o)
			if r.Reason != "ok" || !r.BodyTruncated {
				t.Errorf("%s/%s (%s), truncated %v: want ok, truncated", r.Outcome, r.Reason, r.Error, r.BodyTruncated)
			}
			// The server notices the closed connection a moment later.
			time.Sleep(100 * time.Millisecond)
			if n := sent.Load(); n > bound {
				t.Errorf("the server wrote %d MiB before the probe let go (cap %d KiB): want at most %d MiB",
					n>>20, o.MaxBody>>10, bound>>20)
			} else {
				t.Logf("the server wrote %.1f MiB", float64(n)/(1<<20))
			}
		})
	}
}
