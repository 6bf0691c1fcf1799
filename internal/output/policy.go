package output

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/healthctl/healthctl/internal/policy"
)

// PolicyTable draws the decision table in at most 100 columns: the rule
// number, the result, the condition, the decision and the why of the
// example, wrapped.
func PolicyTable(w io.Writer, rows []policy.Row) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
		tablewriter.WithColumnWidths(tw.NewMapper[int, int]().Set(0, 3).Set(1, 13).Set(2, 30).Set(3, 16).Set(4, 30)),
	)
	t.Header("#", "result", "condition", "decision", "why")
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
