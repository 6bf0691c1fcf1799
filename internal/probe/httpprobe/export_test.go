package httpprobe

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// hooks are session's test seams, as the tests here name them.
type hooks = session.Hooks

// testRun is one probe the tests prepare with hooks (newRun) and run
// with this package's exchange (do).
type testRun struct{ *session.Probe }

func newRun(o *scheme.Options, h hooks) testRun { return testRun{session.New(o, h)} }

func (r testRun) do(ctx context.Context) result.Result { return r.Do(ctx, New) }

// Run is probe.Run for an http:// or https:// URL (without
// --all-addresses): the front door's one step the tests here need.
func Run(ctx context.Context, o *scheme.Options) result.Result {
	return newRun(o, hooks{}).do(ctx)
}

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
