package sweepreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/report"
	"github.com/healthctl/healthctl/internal/watch"
)

func sweepSample() *watch.Sweep {
	pass := watch.Item{Endpoint: &watch.Endpoint{Name: "api"},
		Result:   probe.Result{Outcome: classify.Pass, Reason: classify.OK, Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseTotal: 2 * time.Millisecond})},
		Decision: policy.Decision{Action: policy.Stay}}
	down := watch.Item{Endpoint: &watch.Endpoint{Name: "billing"}, Transition: true,
		Result:   probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused, Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseTotal: time.Millisecond})},
		Decision: policy.Decision{Action: policy.Redeploy}}
	skipped := watch.Item{Endpoint: &watch.Endpoint{Name: "slow"}, Skipped: true}
	return &watch.Sweep{N: 3, Items: []watch.Item{pass, down, skipped}, Targets: 3, Pass: 1, Fail: 1, Skipped: 1, Redeploys: 1}
}

func TestWatchTableTTY(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, output.TableOptions{Terminal: true}, sweepSample(), true, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"TARGET", "\x1b[", "*billing", "redeploy", "skipped (in flight)", "2.0ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := Table(&b, output.TableOptions{Terminal: true}, sweepSample(), false, true); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "api") || strings.Contains(out, "slow") || !strings.Contains(out, "*billing") || strings.Contains(out, "\x1b[") {
		t.Errorf("-q table without colour should hold only the transition:\n%s", out)
	}
}

func TestSweepLine(t *testing.T) {
	if got := Line(sweepSample()); got != "sweep 3: 3 targets, 1 pass, 1 fail, 1 skipped, 1 redeploy in 0.0ms" {
		t.Fatalf("Line = %q", got)
	}
}

func TestWatchTableFitsWidth(t *testing.T) {
	s := sweepSample()
	s.Items[0].Endpoint = &watch.Endpoint{Name: "prod-eu-west-1-payments-gateway-internal-health-check-endpoint-7"}
	s.Items[1].Endpoint = &watch.Endpoint{Name: "prod-eu-west-1-payments-gateway-internal-health-check-endpoint-8"}
	for _, colored := range []bool{false, true} {
		var b bytes.Buffer
		if err := Table(&b, output.TableOptions{Terminal: true, Width: 80}, s, colored, false); err != nil {
			t.Fatal(err)
		}
		if w := tableWidth(b.String()); w > 80 {
			t.Errorf("colour %v: %d columns at 80:\n%s", colored, w, b.String())
		}
		// Both ends kept: the two names still differ.
		if !strings.Contains(b.String(), "…") || !strings.Contains(b.String(), "t-7") || !strings.Contains(b.String(), "t-8") {
			t.Errorf("names not shortened in the middle:\n%s", b.String())
		}
	}
	var b bytes.Buffer
	if err := Table(&b, output.TableOptions{Terminal: true, Width: 80}, sweepSample(), false, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "…") {
		t.Errorf("short names cut:\n%s", b.String())
	}
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abcdef", 0, "abcdef"}, {"abcdef", 6, "abcdef"}, {"abcdefghijkl", 7, "abcd…kl"}, {"ääääääääää", 4, "ää…ä"},
	} {
		if got := shorten(tc.in, tc.n); got != tc.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestLineValueAsMarshalJSON: a sweep's line is encoded once (watchFields)
// and reads as watchJSON.MarshalJSON writes it, byte for byte, for results
// of every shape a probe without a kind's answer makes.
func TestLineValueAsMarshalJSON(t *testing.T) {
	ra := 3 * time.Second
	timings := probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseTotal: 2 * time.Millisecond, probe.PhaseConnect: time.Millisecond, probe.PhaseTTFB: 900 * time.Microsecond})
	pass := probe.Result{URL: "http://127.0.0.1:8080/env/1/health", Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200,
		HTTPVersion: "HTTP/1.1", Address: "127.0.0.1:8080", IPFamily: 4, Timings: timings}
	failed := probe.Result{URL: "http://[::1]:9/health?token=REDACTED", Outcome: classify.Refused, Reason: classify.ConnRefused,
		Error: "connect: connection refused \x1b[31m", Timings: timings, RetryAfter: &ra, BodyExcerpt: "<html>\u009b2J",
		DialAttempts: []probe.DialAttempt{{Address: "[::1]:9", Error: "refused", MS: 0.1}}}
	all := pass
	all.Addresses = []probe.Result{pass, failed}
	for name, it := range map[string]watch.Item{
		"pass":       {Endpoint: &watch.Endpoint{Name: "api"}, Result: pass, Decision: policy.Decision{Action: policy.Stay, Why: "pass"}},
		"failed":     {Endpoint: &watch.Endpoint{Name: "bill\u202eing"}, Result: failed, Transition: true, Streak: 3, Decision: policy.Decision{Action: policy.Redeploy, Why: "<&>"}},
		"hook":       {Endpoint: &watch.Endpoint{Name: "h", URL: "http://h/"}, Result: failed, Hook: &watch.HookResult{OK: true, Status: "exit 0", Output: "a\n\x1b[2Jb"}},
		"addresses":  {Endpoint: &watch.Endpoint{Name: "all"}, Result: all},
		"no timings": {Endpoint: &watch.Endpoint{Name: "none"}},
	} {
		fold := func(c int) int { return min(c, 1) }
		l := &itemLine{it: &it, fold: fold}
		v := l.LineValue()
		if _, marshaler := v.(json.Marshaler); marshaler {
			t.Errorf("%s: line value %T is a json.Marshaler: encoded twice", name, v)
		}
		var got, want bytes.Buffer
		if err := output.JSONLine(&got, v); err != nil {
			t.Fatal(err)
		}
		if err := output.JSONLine(&want, report.NewWatchJSON(&it, fold)); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s:\n got %s\nwant %s", name, got.String(), want.String())
		}
	}
}
