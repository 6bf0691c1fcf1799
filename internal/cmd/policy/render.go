package policycmd

import (
	"fmt"
	"io"

	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/render"
)

// tableResult is the decision table under the settings in force.
type tableResult struct {
	s    policy.Settings
	rows []policy.Row
}

func (t *tableResult) Docs(render.Writer) render.Docs {
	s := t.s
	return render.One(policyJSON{
		SchemaVersion: output.SchemaVersion,
		Settings: settingsJSON{
			GraceS:                s.Grace.Seconds(),
			FailureThreshold:      s.FailureThreshold,
			EscalateTimeoutsAfter: s.EscalateTimeoutsAfter,
			TLSPendingMaxS:        s.TLSPendingMax.Seconds(),
		},
		Rows: t.rows,
	})
}

// Text is the settings line, the table and how to read it.
func (t *tableResult) Text(rw render.Writer) error {
	s, w := t.s, rw.Out
	fmt.Fprintln(w, settingsLine(s))
	if err := policyTable(w, rw.OutTable(), t.rows); err != nil {
		return err
	}
	young, old := policy.ExampleAges(s.Grace)
	fmt.Fprintf(w, `How to read it: after each probe the rules are tried from the top and the first
that matches decides; # is the rule's number (0 hold ... 6 redeploy). "refused,
dns, unreachable" are decisive: the service said no (refused the connection, its
name does not exist, it answered 503), unlike a timeout (slow is not dead) or a
TLS error (a certificate may still be warming). The why column is what healthctl
prints for one example: a target %s old is inside the %s grace window, one %s
old is past it.
The streak counts decisive failures in a row past grace; a pass resets it, and a
redeploy resets it and restarts the grace window, so a broken deploy is not
redeployed in a loop. Change the rules with the flags above (see --help).
`, policyAge(young), policyAge(s.Grace), policyAge(old))
	return nil
}

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
		if err := t.Append(fmt.Sprint(r.Rule)+r.Sub, result, r.Condition, string(r.Action), r.Why); err != nil {
			return err
		}
	}
	return t.Render()
}
