package draincmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/healthctl/healthctl/internal/drain"
	"github.com/healthctl/healthctl/internal/manifest"
	"github.com/healthctl/healthctl/internal/output"
)

// drainJSON is `drain-test -o json` (SPEC.md §9): ok, verdicts, timeline.
type drainJSON struct {
	SchemaVersion int             `json:"schema_version"`
	OK            bool            `json:"ok"`
	ExitCode      int             `json:"exit_code"`
	Pid           int             `json:"pid,omitempty"`
	Signal        string          `json:"signal,omitempty"`
	Interrupted   bool            `json:"interrupted,omitempty"`
	Verdicts      []drain.Verdict `json:"verdicts"`
	Timeline      []drain.Event   `json:"timeline"`
	Formulas      []drain.Formula `json:"formulas"`
}

// lintJSON is `drain-test --manifest FILE -o json`.
type lintJSON struct {
	SchemaVersion int                `json:"schema_version"`
	OK            bool               `json:"ok"`
	ExitCode      int                `json:"exit_code"`
	Manifest      string             `json:"manifest"`
	Checked       []string           `json:"checked"`
	Findings      []manifest.Finding `json:"findings"`
}

// drainFirstLine is drain-test's stable first line: "PASS drain-test pid N
// SIGTERM" or "FAIL drain-test VERDICT...".
func drainFirstLine(r drain.Report, pid int, signal string, colored bool) string {
	if r.OK {
		return fmt.Sprintf("%s drain-test pid %d %s", output.Paint(colored, color.FgGreen, color.Bold).Sprint("PASS"), pid, signal)
	}
	var names []string
	for _, v := range r.Verdicts {
		if !v.OK {
			names = append(names, v.Name)
		}
	}
	return fmt.Sprintf("%s drain-test %s", output.Paint(colored, color.FgRed, color.Bold).Sprint("FAIL"), strings.Join(names, " "))
}

// drainReport renders the first line, the timeline, the verdict table and
// the formulas.
func drainReport(w io.Writer, r drain.Report, formulas []drain.Formula, pid int, signal string, colored bool) error {
	fmt.Fprintln(w, drainFirstLine(r, pid, signal, colored))
	if len(r.Timeline) > 0 {
		fmt.Fprintf(w, "\ntimeline (ms since %s):\n", signal)
		for _, e := range r.Timeline {
			fmt.Fprintf(w, "  %9.1f  %-22s %s\n", e.TMS, e.Event, output.Untrusted(e.Detail))
		}
	}
	fmt.Fprintln(w)
	t := tablewriter.NewTable(w,
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
		tablewriter.WithColumnWidths(tw.NewMapper[int, int]().Set(2, 70)),
	)
	t.Header("verdict", "result", "detail")
	for _, v := range r.Verdicts {
		res := output.Paint(colored, color.FgGreen).Sprint("ok")
		switch {
		case v.Skipped:
			res = output.Paint(colored, color.FgYellow).Sprint("skipped")
		case !v.OK:
			res = output.Paint(colored, color.FgRed, color.Bold).Sprint("FAIL")
		}
		if err := t.Append(v.Name, res, output.Untrusted(v.Detail)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if len(formulas) > 0 {
		fmt.Fprintln(w, "\nshutdown timing rules with these numbers:")
		for _, f := range formulas {
			fmt.Fprintf(w, "  %-80s %s\n", f.Formula, f.Result)
		}
	}
	return nil
}

// lintReport renders the lint's first line and one block per finding:
// "FILE:LINE: NAME resource, container: detail" and its fix.
func lintReport(w io.Writer, file string, res manifest.LintResult, colored bool) {
	if len(res.Findings) == 0 {
		fmt.Fprintf(w, "%s drain-test --manifest %s: %d checked (%s)\n", output.Paint(colored, color.FgGreen, color.Bold).Sprint("PASS"), file, len(res.Checked), strings.Join(res.Checked, ", "))
		return
	}
	fmt.Fprintf(w, "%s drain-test --manifest %s: %d findings in %d checked\n", output.Paint(colored, color.FgRed, color.Bold).Sprint("FAIL"), file, len(res.Findings), len(res.Checked))
	for _, f := range res.Findings {
		where := f.Resource
		if f.Container != "" {
			where += ", container " + f.Container
		}
		fmt.Fprintf(w, "%s:%d: %s %s: %s\n    fix: %s\n", f.File, f.Line, output.Paint(colored, color.FgRed).Sprint(f.Name), where, f.Detail, f.Fix)
	}
}
