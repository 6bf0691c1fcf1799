package policycmd

import (
	"fmt"
	"io"

	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
)

// policyTable draws the decision table in at most 100 columns: the rule
// number, the result, the condition, the decision and the why of the
// example, wrapped.
func policyTable(w io.Writer, topt output.TableOptions, rows []policy.Row) error {
	topt.Wrap, topt.Widths = true, map[int]int{0: 3, 1: 13, 2: 30, 3: 16, 4: 30}
	t := output.NewTable(w, topt,
		"#", "result", "condition", "decision", "why")
	for _, r := range rows {
		result := r.Result
		if result == "refused/dns/unreachable" {
			result = "refused, dns, unreachable"
		}
		if err := t.Append(fmt.Sprint(r.Rule), result, r.Condition, string(r.Action), r.Why); err != nil {
			return err
		}
	}
	return t.Render()
}
