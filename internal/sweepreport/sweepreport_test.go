package sweepreport

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
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
