package policycmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/render"
)

func TestPolicyText(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	if err := Run(context.Background(), fk.F, parse(t, "--grace", "5m", "--failure-threshold", "3")); err != nil || fk.Err.Len() > 0 {
		t.Fatalf("%v, stderr %q", err, fk.Err)
	}
	out := fk.Out.String()
	first := strings.Join(strings.SplitN(out, "\n", 3)[:2], "\n")
	if want := "settings: --grace 5m0s --failure-threshold 3\n          --escalate-timeouts-after 0 (never) --tls-pending-max 0 (forever)"; first != want {
		t.Fatalf("first line %q, want %q", first, want)
	}
	for _, want := range []string{"\tage < 5m0s\t", "past grace, streak < 3", "streak reaches 3",
		"ignore-grace", "ignore-blip", "redeploy", "pending-tls", "ignore-timeout", "stay"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour without a terminal:\n%s", out)
	}
}

func TestPolicyJSONIsTheTable(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	fk.F.Format = render.JSON
	if err := Run(context.Background(), fk.F, parse(t, "--escalate-timeouts-after", "3", "--tls-pending-max", "1h")); err != nil {
		t.Fatal(err)
	}
	out := fk.Out.String()
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("want one JSON line, got:\n%s", out)
	}
	var got struct {
		SchemaVersion *int `json:"schema_version"`
		Settings      map[string]float64
		Rows          []policy.Row
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.SchemaVersion == nil || *got.SchemaVersion != output.SchemaVersion {
		t.Fatalf("schema_version missing: %s", out)
	}
	for k, v := range map[string]float64{"grace_s": 120, "failure_threshold": 1, "escalate_timeouts_after": 3, "tls_pending_max_s": 3600} {
		if got.Settings[k] != v {
			t.Errorf("settings.%s = %v, want %v", k, got.Settings[k], v)
		}
	}
	want := policy.DecisionTable(policy.Settings{Grace: 2 * time.Minute, FailureThreshold: 1, EscalateTimeoutsAfter: 3, TLSPendingMax: time.Hour})
	if len(got.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(got.Rows), len(want))
	}
	for i := range want {
		if got.Rows[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got.Rows[i], want[i])
		}
	}
}

// TestPolicyFitsHundredColumns: the table and its explanation fit a
// 100-column terminal whatever the settings, and number their rules.
func TestPolicyFitsHundredColumns(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--grace", "5m", "--failure-threshold", "3", "--escalate-timeouts-after", "3", "--tls-pending-max", "1h"},
		{"--grace", "0s", "--failure-threshold", "12", "--escalate-timeouts-after", "1", "--tls-pending-max", "90m"},
	} {
		fk := clitest.New(nil, classify.Pass)
		streams, out, _ := output.Test(true)
		streams.OutWidth = 100
		fk.F.Streams = streams
		if err := Run(context.Background(), fk.F, parse(t, args...)); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > 100 {
				t.Errorf("%v: %d columns: %s", args, n, l)
			}
		}
		for _, rule := range []string{"│ 1 │", "│ 6 │"} {
			if !strings.Contains(out.String(), rule) {
				t.Errorf("%v: no row numbered %q", args, rule)
			}
		}
		if !strings.Contains(out.String(), "How to read it") {
			t.Errorf("%v: no explanation", args)
		}
	}
}
