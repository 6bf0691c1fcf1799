package watchcmd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
)

func sweepSample() *watch.Sweep {
	pass := watch.Item{Target: &watch.Target{Name: "api"},
		Result:   probe.Result{Outcome: classify.Pass, Reason: classify.OK, Timings: probe.Timings{probe.PhaseTotal: 2 * time.Millisecond}},
		Decision: policy.Decision{Action: policy.Stay}}
	down := watch.Item{Target: &watch.Target{Name: "billing"}, Transition: true,
		Result:   probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused, Timings: probe.Timings{probe.PhaseTotal: time.Millisecond}},
		Decision: policy.Decision{Action: policy.Redeploy}, State: state.Target{}}
	skipped := watch.Item{Target: &watch.Target{Name: "slow"}, Skipped: true}
	return &watch.Sweep{N: 3, Items: []watch.Item{pass, down, skipped}, Targets: 3, Pass: 1, Fail: 1, Skipped: 1, Redeploys: 1}
}

func TestWatchTableTTY(t *testing.T) {
	var b bytes.Buffer
	if err := watchTable(&b, output.TableOptions{Terminal: true}, sweepSample(), true, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"TARGET", "\x1b[", "*billing", "redeploy", "skipped (in flight)", "2.0ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := watchTable(&b, output.TableOptions{Terminal: true}, sweepSample(), false, true); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "api") || strings.Contains(out, "slow") || !strings.Contains(out, "*billing") || strings.Contains(out, "\x1b[") {
		t.Errorf("-q table without colour should hold only the transition:\n%s", out)
	}
}

func TestSweepLine(t *testing.T) {
	if got := sweepLine(sweepSample()); got != "sweep 3: 3 targets, 1 pass, 1 fail, 1 skipped, 1 redeploy in 0.0ms" {
		t.Fatalf("sweepLine = %q", got)
	}
}
