package draincmd

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/drain/judge"
	"github.com/healthctl/healthctl/internal/manifest"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/render"
)

// drainJSON is `drain-test -o json` (SPEC.md §9): ok, verdicts, timeline.
type drainJSON struct {
	SchemaVersion int    `json:"schema_version"`
	OK            bool   `json:"ok"`
	ExitCode      int    `json:"exit_code"`
	Pid           int    `json:"pid,omitempty"`
	Signal        string `json:"signal,omitempty"`
	// SignalledAt is t=0 on the wall clock (RFC 3339, UTC, to the
	// nanosecond): every t_ms and made_ms counts from it, so the
	// timeline lines up with the service's own logs.
	SignalledAt string          `json:"signalled_at,omitempty"`
	Interrupted bool            `json:"interrupted"`
	Verdicts    []judge.Verdict `json:"verdicts"`
	Timeline    []judge.Event   `json:"timeline"`
	Formulas    []judge.Formula `json:"formulas"`
	// Requests is the request log: every request drain-test made, by the
	// time it was made.
	Requests []judge.Record `json:"requests"`
	// NotChecked are the invariants this run did not check (always
	// present: [] when every one was).
	NotChecked []judge.NotChecked `json:"not_checked"`
	// Traffic is where the traffic requests went (absent: no traffic
	// endpoint).
	Traffic *trafficJSON `json:"traffic,omitempty"`
	// Starved says the run failed while drain-test itself was starved:
	// exit 9, unknown (absent otherwise).
	Starved *judge.Starved `json:"starved,omitempty"`
	// Lateness is the worst lateness drain-test measured of its own timer
	// and pollers after the signal (absent before one was sent).
	Lateness *latenessJSON `json:"lateness,omitempty"`
}

// latenessJSON is drain-test's own worst scheduling lateness.
type latenessJSON struct {
	MaxMS   float64 `json:"max_ms"`
	AtMS    float64 `json:"at_ms"`
	What    string  `json:"what"`
	BoundMS float64 `json:"bound_ms"`
}

// trafficJSON names the traffic endpoint: its URL, the flag it came from
// ("--traffic", or "--inflight" when no --traffic was given) and the
// window each request had.
type trafficJSON struct {
	URL      string `json:"url"`
	From     string `json:"from"`
	WindowMS int64  `json:"window_ms"`
}

// lintJSON is `drain-test --manifest FILE -o json`.
type lintJSON struct {
	SchemaVersion int                `json:"schema_version"`
	OK            bool               `json:"ok"`
	ExitCode      int                `json:"exit_code"`
	Manifest      string             `json:"manifest"`
	Checked       []string           `json:"checked"`
	Findings      []manifest.Finding `json:"findings"`
	// NotJudged are the services whose shutdown timing was not judged,
	// with why (no HTTP shutdown contract in the file).
	NotJudged []string `json:"not_judged,omitempty"`
}

// drainFirstLine is drain-test's stable first line: "PASS drain-test pid N
// SIGTERM" or "FAIL drain-test VERDICT...".
func drainFirstLine(r judge.Report, pid int, signal string, colored bool) string {
	if st := r.Starved; st != nil && r.Unknown() {
		return fmt.Sprintf("%s drain-test pid %d %s: %s; not named: %s", output.Paint(colored, color.FgYellow, color.Bold).Sprint("UNKNOWN"), pid, signal, st.Why(), strings.Join(st.Seen, " "))
	}
	if r.OK {
		line := fmt.Sprintf("%s drain-test pid %d %s", output.Paint(colored, color.FgGreen, color.Bold).Sprint("PASS"), pid, signal)
		if nc := r.NotCheckedLine(); nc != "" {
			// Bare only when every invariant was checked: a CI gate
			// reads this line.
			line += " (" + nc + ")"
		}
		return line
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
// the formulas; the table and the formula lines fit in width columns.
func drainReport(w io.Writer, topt output.TableOptions, r judge.Report, formulas []judge.Formula, pid int, signal string, colored bool, width int) error {
	fmt.Fprintln(w, drainFirstLine(r, pid, signal, colored))
	if len(r.Timeline) > 0 {
		fmt.Fprintf(w, "\ntimeline (ms since %s):\n", signal)
		const indent = 2 + 9 + 2 + 22 + 1
		for _, e := range r.Timeline {
			for i, l := range wrap(output.Untrusted(e.Detail), width-indent) {
				if i == 0 {
					fmt.Fprintf(w, "  %9.1f  %-22s %s\n", e.TMS, e.Event, l)
				} else {
					fmt.Fprintf(w, "%*s%s\n", indent, "", l)
				}
			}
		}
	}
	fmt.Fprintln(w)
	// The detail column takes what the verdict and result columns, the
	// borders and the padding leave.
	nameW := len("VERDICT")
	for _, v := range r.Verdicts {
		nameW = max(nameW, len(v.Name))
	}
	detailW := max(24, width-nameW-len("skipped")-10-1)
	topt.Wrap, topt.Widths = true, map[int]int{2: detailW}
	t := output.NewTable(w, topt, "verdict", "result", "detail")
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
		formulaLines(w, formulas, width)
	}
	return nil
}

// formulaLines prints each rule and its result in two aligned columns when
// they fit in width, else the result on the next line, indented; a line
// longer than width is wrapped at spaces.
func formulaLines(w io.Writer, formulas []judge.Formula, width int) {
	col := 0
	for _, f := range formulas {
		col = max(col, len(f.Formula))
	}
	twoCols := true
	for _, f := range formulas {
		if 2+col+2+len(f.Result) > width {
			twoCols = false
		}
	}
	for _, f := range formulas {
		if twoCols {
			fmt.Fprintf(w, "  %-*s  %s\n", col, f.Formula, f.Result)
			continue
		}
		for _, l := range wrap(f.Formula, width-2) {
			fmt.Fprintf(w, "  %s\n", l)
		}
		for _, l := range wrap("→ "+f.Result, width-6) {
			fmt.Fprintf(w, "      %s\n", l)
		}
	}
}

// wrap breaks s at spaces into lines of at most n runes (a longer word
// stays whole).
func wrap(s string, n int) []string {
	n = max(n, 20)
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= n:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// lintReport renders the lint's first line and one block per finding:
// "FILE:LINE: NAME resource, container: detail" and its fix.
func lintReport(w io.Writer, file string, res manifest.LintResult, colored bool) {
	// Every name and value from the manifest (resource, container and
	// service names, commands quoted in details and fixes) and the file
	// name go through the one escaping rule: a manifest cannot drive the
	// terminal (OSC 52 writing the clipboard, a retitle, RLO).
	u := output.Untrusted
	defer func() {
		for _, n := range res.NotJudged {
			fmt.Fprintf(w, "not judged: %s\n", u(n))
		}
	}()
	if len(res.Findings) == 0 {
		checked := make([]string, len(res.Checked))
		for i, c := range res.Checked {
			checked[i] = u(c)
		}
		fmt.Fprintf(w, "%s drain-test --manifest %s: %d checked (%s)\n", output.Paint(colored, color.FgGreen, color.Bold).Sprint("PASS"), u(file), len(res.Checked), strings.Join(checked, ", "))
		return
	}
	noun := "findings"
	if len(res.Findings) == 1 {
		noun = "finding"
	}
	fmt.Fprintf(w, "%s drain-test --manifest %s: %d %s in %d checked\n", output.Paint(colored, color.FgRed, color.Bold).Sprint("FAIL"), u(file), len(res.Findings), noun, len(res.Checked))
	for _, f := range res.Findings {
		where := f.Resource
		if f.Container != "" {
			where += ", container " + f.Container
		}
		fmt.Fprintf(w, "%s:%d: %s %s: %s\n    fix: %s\n", u(f.File), f.Line, output.Paint(colored, color.FgRed).Sprint(f.Name), u(where), u(f.Detail), u(f.Fix))
	}
}

// lintResult is --manifest's findings.
type lintResult struct {
	manifest string
	res      manifest.LintResult
	code     int
}

func (l *lintResult) Docs(render.Writer) render.Docs {
	res := l.res
	if res.Findings == nil {
		res.Findings = []manifest.Finding{}
	}
	return render.One(lintJSON{SchemaVersion: output.SchemaVersion, OK: l.code == 0, ExitCode: l.code,
		Manifest: l.manifest, Checked: res.Checked, Findings: res.Findings, NotJudged: res.NotJudged})
}

// Text is the lint's report (with -q: only when it found something, on
// stderr).
func (l *lintResult) Text(w render.Writer) error {
	if w.Quiet && l.code == 0 {
		return nil
	}
	out := w.Out
	if w.Quiet {
		out = w.Err
	}
	lintReport(out, l.manifest, l.res, w.OutColor)
	return nil
}

// runResult is a drain experiment's verdicts, timeline and requests.
type runResult struct {
	r           judge.Report
	obs         evidence.Observation
	formulas    []judge.Formula
	interrupted bool
	code        int
	// pid is --pid: the service drain-test attached to (0: it started it).
	pid int
}

func (x *runResult) Docs(render.Writer) render.Docs {
	r, obs, interrupted := x.r, x.obs, x.interrupted
	j := drainJSON{SchemaVersion: output.SchemaVersion, OK: r.OK && !interrupted, ExitCode: x.code, Pid: obs.Pid,
		Signal: obs.Signal, Interrupted: interrupted, Verdicts: r.Verdicts, Timeline: r.Timeline, Formulas: x.formulas, Requests: r.Requests}
	j.NotChecked = slices.Clone(r.NotChecked)
	if j.NotChecked == nil || interrupted {
		j.NotChecked = []judge.NotChecked{}
	}
	for i := range j.NotChecked {
		j.NotChecked[i].Why = output.Untrusted(j.NotChecked[i].Why)
	}
	j.Starved = r.Starved
	if !obs.SignalledAt.IsZero() {
		l := obs.Lateness
		j.Lateness = &latenessJSON{MaxMS: float64(l.Max.Microseconds()) / 1000, AtMS: float64(l.At.Microseconds()) / 1000, What: l.What, BoundMS: float64(judge.StarvedBound.Milliseconds())}
	}
	if t := obs.Traffic; t.URL != "" {
		j.Traffic = &trafficJSON{URL: t.URL, From: t.Source(), WindowMS: t.Window.Milliseconds()}
	}
	if !obs.SignalledAt.IsZero() {
		j.SignalledAt = obs.SignalledAt.UTC().Format(time.RFC3339Nano)
	}
	if interrupted {
		// Cut short: what was seen is not a shutdown to judge.
		j.Verdicts, j.Formulas = []judge.Verdict{}, []judge.Formula{}
	}
	if j.Timeline == nil {
		j.Timeline = []judge.Event{}
	}
	// Details quote what the service sent (an error, a status line):
	// escaped in JSON as in the report.
	j.Verdicts = slices.Clone(j.Verdicts)
	for i := range j.Verdicts {
		j.Verdicts[i].Detail = output.Untrusted(j.Verdicts[i].Detail)
	}
	j.Timeline = slices.Clone(j.Timeline)
	for i := range j.Timeline {
		j.Timeline[i].Detail = output.Untrusted(j.Timeline[i].Detail)
	}
	j.Requests = slices.Clone(j.Requests)
	if j.Requests == nil {
		j.Requests = []judge.Record{}
	}
	for i := range j.Requests {
		j.Requests[i].Detail = output.Untrusted(j.Requests[i].Detail)
	}
	return render.One(j)
}

// Text is the report (with -q: only a failure, on stderr); a run cut short
// says what became of the service, on stderr.
func (x *runResult) Text(w render.Writer) error {
	if x.interrupted {
		if x.pid != 0 {
			fmt.Fprintf(w.Err, "drain-test: interrupted: pid %d was left running (drain-test attached to it, it did not start it), nothing was judged\n", x.pid)
		} else {
			fmt.Fprintln(w.Err, "drain-test: interrupted: the service and everything it started were killed, nothing was judged")
		}
		return nil
	}
	out := w.Out
	if w.Quiet {
		if x.r.OK {
			return nil
		}
		out = w.Err
	}
	width := w.Columns(w.Getenv)
	if width == 0 {
		width = 80 // the report wraps: it needs some width
	}
	return drainReport(out, w.OutTable(), x.r, x.formulas, x.obs.Pid, x.obs.Signal, w.OutColor, width)
}
