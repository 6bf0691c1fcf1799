package metrics

import (
	"bytes"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
)

// The documented alert rules (docs/healthctl-alerts.yml, shipped in the
// packages) and their promtool unit tests.
const (
	alertRules     = "../../docs/healthctl-alerts.yml"
	alertRulesTest = "../../testdata/alerts/healthctl-alerts.test.yml"
)

// TestAlertRulesPromtool runs `promtool check rules` and `promtool test
// rules`: the redeploy alert fires on a redeploy decided on a target's
// first sweep and not for a recover: false target; the stale-sweep alert
// fires once sweeps stop; the failing-target alert fires after five sweeps
// of any failing outcome (a timeout too) and a pass restarts it; the
// fleet-held alert after five minutes of hold-fleet decisions; the
// dead-watcher alerts when a --listen watch cannot be scraped (its series
// stale, so the stale-sweep alert cannot fire) and when no sweep series
// exists at all. Skipped without promtool outside CI; in CI
// (.ci/deps/integrations.sh installs it) a missing promtool fails.
func TestAlertRulesPromtool(t *testing.T) {
	pt, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("promtool not installed, and CI=%s (.ci/deps/integrations.sh installs it)", os.Getenv("CI"))
		}
		t.Skip("promtool not installed (Debian: apt-get install prometheus)")
	}
	if out, err := exec.Command(pt, "check", "rules", alertRules).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	cmd := exec.Command(pt, "test", "rules", filepath.Base(alertRulesTest))
	cmd.Dir = filepath.Dir(alertRulesTest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

// TestAlertRulesNameRealSeries: every metric the rules and their test use
// is one Write writes, so the test's series are the exporter's.
func TestAlertRulesNameRealSeries(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := state.New()
	st.Sweeps = 1
	tg := &watch.Endpoint{Name: "a", Recover: true, Options: &scheme.Options{URL: &url.URL{Scheme: "http", Host: "a"}}}
	st.Targets["a"] = state.Entry{Redeploys: 1, LastRedeploy: now}
	items := []watch.Item{{Endpoint: tg, Result: probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused, Timings: probe.Timings{}},
		Decision: policy.Decision{Action: policy.Redeploy}}}
	var buf bytes.Buffer
	if err := Write(&buf, Input{Latest: items, State: st, Sweep: &watch.Sweep{N: 1, Started: now, Targets: 1}}); err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+)`).FindAllSubmatch(buf.Bytes(), -1) {
		written[string(m[1])] = true
	}
	for _, f := range []string{alertRules, alertRulesTest} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`\bhealthctl_[a-z_]+`).FindAll(b, -1) {
			if name := string(m); !written[name] && name != "healthctl_alerts" {
				t.Errorf("%s uses %s, which the exporter never writes", f, name)
			}
		}
	}
	if !bytes.Contains(buf.Bytes(), []byte(`healthctl_last_redeploy_timestamp_seconds{target="a"} 1.767323045e+09`)) {
		t.Errorf("no last-redeploy timestamp:\n%s", buf.Bytes())
	}
}

// TestMetricTableDocumentsEverySeries: every metric watch's exposition
// writes (a redeployed target with a hook pending, a gRPC answer, a sweep)
// has a row in docs/watch.md's metric table.
func TestMetricTableDocumentsEverySeries(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := state.New()
	st.Sweeps = 1
	tg := &watch.Endpoint{Name: "a", Recover: true, Options: &scheme.Options{URL: &url.URL{Scheme: "http", Host: "a"}}}
	st.Targets["a"] = state.Entry{Redeploys: 1, LastRedeploy: now, HookPending: true, HeldFleet: 1, Skipped: 1}
	items := []watch.Item{{Endpoint: tg, Result: probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused, Timings: probe.Timings{}},
		Decision: policy.Decision{Action: policy.Redeploy}}}
	var buf bytes.Buffer
	if err := Write(&buf, Input{Latest: items, State: st, Sweep: &watch.Sweep{N: 1, Started: now, Targets: 1}}); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/watch.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	if i := bytes.Index(doc, []byte("## Prometheus metrics")); i >= 0 {
		section = string(doc[i:])
		if j := regexp.MustCompile(`(?m)^## `).FindStringIndex(section[3:]); j != nil {
			section = section[:j[0]+3]
		}
	}
	documented := map[string]bool{}
	for _, row := range regexp.MustCompile("(?m)^\\| (`[a-z_]+[^|]*)\\|").FindAllStringSubmatch(section, -1) {
		for _, m := range regexp.MustCompile("`([a-z_]+)").FindAllStringSubmatch(row[1], -1) {
			documented[m[1]] = true
		}
	}
	names := regexp.MustCompile(`(?m)^# TYPE (\S+)`).FindAllSubmatch(buf.Bytes(), -1)
	if len(names) < 10 {
		t.Fatalf("only %d metrics written", len(names))
	}
	for _, m := range names {
		if !documented[string(m[1])] {
			t.Errorf("%s is written but has no row in docs/watch.md's metric table", m[1])
		}
	}
	if !documented["healthctl_last_redeploy_timestamp_seconds"] {
		t.Error("healthctl_last_redeploy_timestamp_seconds (the redeploy alert's series) is not in the metric table")
	}
}
