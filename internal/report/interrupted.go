package report

import (
	"fmt"

	"github.com/fatih/color"

	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
)

// InterruptedJSON is `probe -o json`'s object for a URL whose probe a signal
// (SIGINT, SIGTERM) cut short. The outcome set is closed and an interrupted
// probe has no outcome, so the object has no outcome or reason: it says
// "interrupted": true, with the exit code of the run (130 or 143) and the
// time the probe had run.
type InterruptedJSON struct {
	SchemaVersion int    `json:"schema_version"`
	URL           string `json:"url"`
	Interrupted   bool   `json:"interrupted"`
	ExitCode      int    `json:"exit_code"`
	Address       string `json:"address,omitempty"`
	TimingsMS     Millis `json:"timings_ms"`
}

// NewInterruptedJSON converts a probe result that has Canceled set.
func NewInterruptedJSON(r probe.Result, exitCode int) InterruptedJSON {
	j := InterruptedJSON{SchemaVersion: output.SchemaVersion, URL: r.URL, Interrupted: true, ExitCode: exitCode, Address: r.Address, TimingsMS: Millis(r.Timings)}
	return j
}

// InterruptedLine is the text line for a probe a signal cut short, in the
// columns of FirstLine: `INTERRUPTED URL - 1203.4ms` (no outcome, no status).
func InterruptedLine(r probe.Result, colored bool) string {
	return fmt.Sprintf("%s %s - %s", output.Paint(colored, color.FgYellow, color.Bold).Sprint("INTERRUPTED"), output.Untrusted(r.URL), output.FormatMS(r.Timings.Of(probe.PhaseTotal)))
}
