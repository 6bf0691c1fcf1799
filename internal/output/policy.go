package output

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/healthctl/healthctl/internal/policy"
)

// PolicyTable draws the decision table, wrapping the why so the table stays
// readable in a terminal.
func PolicyTable(w io.Writer, rows []policy.Row) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
		tablewriter.WithColumnWidths(tw.NewMapper[int, int]().Set(3, 60)),
	)
	t.Header("result", "condition", "decision", "why")
	for _, r := range rows {
		if err := t.Append(r.Result, r.Condition, string(r.Action), r.Why); err != nil {
			return err
		}
	}
	return t.Render()
}
