package listen

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

// TestNoHTTPSeriesOffHTTP: a tcp or grpc module's answer has no
// probe_http_* family (a tcp probe's probe_http_status_code 0 fires the
// common probe_http_status_code <= 199 alert for a passing target); an
// http module's has them. grpc has no probe_failed_due_to_regex either.
func TestNoHTTPSeriesOffHTTP(t *testing.T) {
	mods, err := ParseModules("bb.yml", []byte("modules:\n  http_2xx:\n    prober: http\n  tcp_connect:\n    prober: tcp\n  grpc_plain:\n    prober: grpc\n"),
		target.Defaults(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	pass := func(_ context.Context, o *probe.Options) probe.Result {
		r := probe.Result{Outcome: classify.Pass, Reason: classify.OK, IPFamily: 4}
		if strings.HasPrefix(o.URL.Scheme, "http") {
			r.HTTPStatus, r.HTTPVersion = 200, "HTTP/1.1"
		}
		return r
	}
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	svc := New(Config{Interval: time.Minute, Probe: pass, Modules: mods, Allow: allow})
	h := svc.Handler()
	for _, c := range []struct {
		module      string
		http, regex bool
	}{{"http_2xx", true, true}, {"tcp_connect", false, true}, {"grpc_plain", false, false}} {
		code, body := get(t, h, "/probe?target="+url.QueryEscape("127.0.0.1:1")+"&module="+c.module)
		if code != 200 || !strings.Contains(body, "\nprobe_success 1\n") {
			t.Fatalf("%s: %d\n%s", c.module, code, body)
		}
		checkExposition(t, body)
		if got := strings.Contains(body, "probe_http_"); got != c.http {
			t.Errorf("%s: probe_http_* present %v, want %v\n%s", c.module, got, c.http, body)
		}
		if got := strings.Contains(body, "probe_failed_due_to_regex"); got != c.regex {
			t.Errorf("%s: probe_failed_due_to_regex present %v, want %v", c.module, got, c.regex)
		}
		if !strings.Contains(body, `healthctl_probe_outcome{outcome="pass",reason="ok"} 1`) {
			t.Errorf("%s: no healthctl_probe_outcome\n%s", c.module, body)
		}
	}
}
