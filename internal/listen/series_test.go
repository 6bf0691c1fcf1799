package listen

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/target"
)

// TestNoHTTPSeriesOffHTTP: a tcp or grpc module's answer has no
// probe_http_* family (a tcp probe's probe_http_status_code 0 fires the
// common probe_http_status_code <= 199 alert for a passing target); an
// http module's has them. grpc has no probe_failed_due_to_regex either.
func TestNoHTTPSeriesOffHTTP(t *testing.T) {
	mods, err := blackbox.ParseModules("bb.yml", []byte("modules:\n  http_2xx:\n    prober: http\n  tcp_connect:\n    prober: tcp\n  grpc_plain:\n    prober: grpc\n"),
		target.Defaults(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	pass := func(_ context.Context, o *scheme.Options) probe.Result {
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

// TestOwnSeries: /metrics carries the listener's own series apart from
// the fleet's: probes in flight, the limit, and /probe's answers by kind.
func TestOwnSeries(t *testing.T) {
	mods, _ := blackbox.DefaultModules(target.Defaults(), func(string) string { return "" })
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	var seen []string
	now := t0
	svc := New(Config{Interval: time.Minute, Probe: fakeProber(&seen), Modules: mods, Allow: allow, Rate: 4, ProbeConcurrency: 7,
		Now: func() time.Time { return now }})
	h := svc.Handler()
	for _, p := range []string{"/probe?target=127.0.0.1:1/", "/probe?target=127.0.0.1:2/", "/probe?target=10.0.0.1:1/", "/probe", "/probe?target=127.0.0.1:1/"} {
		get(t, h, p)
	}
	_, body := get(t, h, "/metrics")
	checkExposition(t, body)
	for _, want := range []string{"\nhealthctl_listen_probes_in_flight 0\n", "\nhealthctl_listen_probe_limit 7\n",
		`healthctl_listen_probe_requests_total{answer="probed"} 2`, `healthctl_listen_probe_requests_total{answer="refused"} 2`,
		`healthctl_listen_probe_requests_total{answer="rate_limited"} 1`, `healthctl_listen_probe_requests_total{answer="busy"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q\n%s", want, body)
		}
	}
}
