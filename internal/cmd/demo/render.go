package democmd

import (
	"fmt"
	"io"

	"github.com/fatih/color"
	"github.com/healthctl/healthctl/internal/output"
)

// demoRow is one probed demo service: the fields of a probe's JSON object
// the demo's table shows.
type demoRow struct {
	Service  string `json:"-"`
	URL      string `json:"url"`
	Outcome  string `json:"outcome"`
	Reason   string `json:"reason"`
	ExitCode int    `json:"exit_code"`
	Status   int    `json:"http_status"`
	Decision *struct {
		Action string `json:"action"`
	} `json:"decision"`
	TimingsMS map[string]float64 `json:"timings_ms"`
}

// demoTable draws the demo's probe table: service, outcome, reason, exit
// code, status, total time, decision; outcomes coloured as in FirstLine.
func demoTable(w io.Writer, topt output.TableOptions, rows []demoRow, colour bool) error {
	t := output.NewTable(w, topt, "service", "outcome", "reason", "exit", "status", "time", "decision")
	pass := output.Paint(colour, color.FgGreen)
	fail := output.Paint(colour, color.FgRed)
	for _, r := range rows {
		outcome := fail.Sprint(r.Outcome)
		if r.Outcome == "pass" {
			outcome = pass.Sprint(r.Outcome)
		}
		status := "-"
		if r.Status != 0 {
			status = fmt.Sprint(r.Status)
		}
		action := ""
		if r.Decision != nil {
			action = r.Decision.Action
		}
		total := "-"
		if ms, ok := r.TimingsMS["total"]; ok {
			total = millis(ms)
		}
		if err := t.Append(r.Service, outcome, r.Reason, fmt.Sprint(r.ExitCode), status, total, action); err != nil {
			return err
		}
	}
	return t.Render()
}

// millis prints a duration in fractional milliseconds the way the first
// line does: 0.4ms, 12.4ms, 1002ms.
func millis(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.0fms", ms)
	}
	return fmt.Sprintf("%.1fms", ms)
}

// heading returns a printf-style function for section headings: bold on a
// colour stream, plain otherwise.
func heading(colour bool) func(format string, args ...any) string {
	c := output.Paint(colour, color.Bold)
	return func(format string, args ...any) string { return c.Sprintf(format, args...) }
}
