package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/scheme"
)

// The kinds, as the binary links them: the scheme table names every kind
// (each row's Kind), so importing it declares them all, and their declared
// reasons (a refused login, a warming service) are the policy's table and
// words here as in the binary.

// TestPolicySeesEveryKind: every row's kind's refused login is in the
// decision table's login row and is never redeployed, and every warming
// reason is ignored, whatever kind declared it.
func TestPolicySeesEveryKind(t *testing.T) {
	var login string
	for _, r := range policy.DecisionTable(policy.DefaultSettings()) {
		if strings.HasPrefix(r.Condition, "a login refused") {
			login = r.Condition
		}
	}
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	old := policy.History{StartedAt: now.Add(-time.Hour)}
	kinds := 0
	for _, row := range scheme.Schemes() {
		if row.Kind == nil {
			continue
		}
		kinds++
		for _, def := range row.Kind.Reasons {
			if !def.Credentials && !def.Warming {
				continue
			}
			if def.Credentials && !strings.Contains(login, string(def.Reason)+",") && !strings.Contains(login, string(def.Reason)+")") {
				t.Errorf("%s://: %s is not in the decision table's login row %q", row.Name, def.Reason, login)
			}
			d, _ := policy.Decide(policy.Input{Outcome: def.Outcome, Reason: def.Reason, History: old, Settings: policy.DefaultSettings(), Now: now})
			if d.Action == policy.Redeploy {
				t.Errorf("%s://: %s (credentials %v, warming %v) decided %s: %s", row.Name, def.Reason, def.Credentials, def.Warming, d.Action, d.Why)
			}
		}
	}
	if kinds == 0 {
		t.Fatal("the scheme table names no kind")
	}
}
