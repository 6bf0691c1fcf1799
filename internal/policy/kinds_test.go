package policy_test

import (
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/scheme"
)

// The kinds, as the binary links them: the scheme table names every kind
// (each row's Kind), so importing it declares them all, and their declared
// reasons (a refused login, a warming service) are the policy's table and
// words here as in the binary.

// TestPolicySeesEveryKind: every reason of every row's kind is declared
// in this test binary, as in the binary users run.
func TestPolicySeesEveryKind(t *testing.T) {
	kinds := 0
	for _, row := range scheme.Schemes() {
		if row.Kind == nil {
			continue
		}
		kinds++
		for _, def := range row.Kind.Reasons {
			if _, ok := classify.Declared(def.Reason); !ok {
				t.Errorf("%s://: reason %s is not declared in the policy's test binary", row.Name, def.Reason)
			}
		}
	}
	if kinds == 0 {
		t.Fatal("the scheme table names no kind")
	}
}
