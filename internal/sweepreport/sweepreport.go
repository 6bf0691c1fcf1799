// Package sweepreport renders one watch sweep, as internal/report renders
// one probe: each target's JSON line (report.WatchJSON: the probe's object with the
// target's decision, streak, transition and hook), the sweep's object
// (SweepJSON), its one-line summary (Line) and the table (Table); Result
// hands them to the chosen format.
package sweepreport

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/report"
	"github.com/healthctl/healthctl/internal/watch"

	"github.com/healthctl/healthctl/internal/words"
)

// itemLine is one item's line as JSONLines writes it: its value
// (report.NewWatchJSON) made only when the line is encoded, by encoding/json.
type itemLine struct {
	it   *watch.Item
	fold func(int) int
}

// LineValue is the line's value for encoding/json (output.LineValuer),
// encoded once (report.WatchJSON.Value).
func (l *itemLine) LineValue() any {
	j := report.NewWatchJSON(l.it, l.fold)
	return j.Value()
}

// SweepJSON is the line that ends each sweep in JSON output:
// {"schema_version":1,"sweep":{...}}.
type SweepJSON struct {
	SchemaVersion int          `json:"schema_version"`
	Sweep         SweepSummary `json:"sweep"`
}

// SweepSummary counts one sweep's targets: the counts /status.json shows
// too, and what only the sweep line says.
type SweepSummary struct {
	watch.SweepCounts
	HookFailures int `json:"hook_failures"`
	Transitions  int `json:"transitions"`
	// HeldFleet and HeldBudget count the redeploys the fleet rule held,
	// HoldWhy says why.
	HeldFleet  int    `json:"held_fleet"`
	HeldBudget int    `json:"held_budget"`
	HoldWhy    string `json:"hold_why,omitempty"`
	// HeldGroups are the groups the fleet rule held, each counted with
	// its own why.
	HeldGroups  []HeldGroupJSON `json:"held_groups,omitempty"`
	Interrupted bool            `json:"interrupted"`
	Shard       string          `json:"shard,omitempty"`
	// StateWriteMS and MetricsWriteMS are how long writing --state and
	// --prom-file took (encoding, fsync and rename), when written: at a big
	// fleet's size they are a sweep's cost of their own.
	StateWriteMS   *float64 `json:"state_write_ms,omitempty"`
	MetricsWriteMS *float64 `json:"metrics_write_ms,omitempty"`
	// ExitCode (--once) is the code the run exits with: 0, 8 redeploy, 9
	// held by the fleet rule, 74 the state or metrics not written, 130
	// interrupted (143 after SIGTERM is decided by the root), 1 for any of
	// them with --exit-1.
	ExitCode *int `json:"exit_code,omitempty"`
}

// HeldGroupJSON is one group the fleet rule held: how many targets failed
// together, how many of their redeploys were held, and why.
type HeldGroupJSON struct {
	Targets int    `json:"targets"`
	Held    int    `json:"held"`
	Why     string `json:"why"`
}

// NewSweepJSON summarises a sweep.
func NewSweepJSON(s *watch.Sweep, shard string) SweepJSON {
	var groups []HeldGroupJSON
	for _, g := range s.HeldGroups {
		groups = append(groups, HeldGroupJSON{Targets: g.Targets, Held: g.Held, Why: g.Why})
	}
	return SweepJSON{SchemaVersion: output.SchemaVersion, Sweep: SweepSummary{
		SweepCounts:  s.Counts(),
		HookFailures: s.HookFailures, Transitions: s.Transitions, Interrupted: s.Interrupted, Shard: shard,
		HeldFleet: s.HeldFleet, HeldBudget: s.HeldBudget, HoldWhy: s.HoldWhy, HeldGroups: groups,
	}}
}

// Line is the one-line text summary of a sweep.
func Line(s *watch.Sweep) string {
	line := fmt.Sprintf("sweep %d: %s, %d pass, %d fail, %d skipped, %d redeploy in %s",
		s.N, words.Plural(s.Targets, "target"), s.Pass, s.Fail, s.Skipped, s.Redeploys, output.FormatMS(s.Duration))
	switch {
	case len(s.HeldGroups) > 1:
		sizes := make([]string, len(s.HeldGroups))
		for i, g := range s.HeldGroups {
			sizes[i] = strconv.Itoa(g.Held)
		}
		line += fmt.Sprintf(", %d held (fleet: %d groups, %s)", s.HeldFleet, len(s.HeldGroups), strings.Join(sizes, " + "))
	case s.HeldFleet > 0:
		line += fmt.Sprintf(", %d held (fleet)", s.HeldFleet)
	}
	if s.HeldBudget > 0 {
		line += fmt.Sprintf(", %d deferred (--max-redeploys)", s.HeldBudget)
	}
	if s.HookFailures > 0 {
		line += ", " + words.Plural(s.HookFailures, "hook failure")
	}
	if s.Interrupted {
		line += " (interrupted)"
	}
	return line
}

// Table draws one sweep as a table: target, outcome, reason, latency,
// decision, streak. A transition is marked with "*" before the target (and
// in colour: the new decision stands out). onlyTransitions keeps just those
// rows (-q). width > 0 is the terminal's: names too long for it are
// shortened in the middle with "…" (both ends of a name tell targets apart).
func Table(w io.Writer, topt output.TableOptions, s *watch.Sweep, colored, onlyTransitions bool) error {
	width := topt.Width
	longest := 0
	for i := range s.Items {
		longest = max(longest, utf8.RuneCountInString(s.Items[i].Endpoint.Name))
	}
	var buf bytes.Buffer
	rows, err := renderTable(&buf, topt, s, colored, onlyTransitions, 0)
	if err != nil || rows == 0 {
		return err
	}
	if over := tableWidth(buf.String()) - width; topt.Terminal && width > 0 && over > 0 {
		buf.Reset()
		if _, err := renderTable(&buf, topt, s, colored, onlyTransitions, max(minNameWidth, longest-over)); err != nil {
			return err
		}
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// minNameWidth is the fewest characters of a name a shortened table keeps.
const minNameWidth = 8

// renderTable draws the table with names cut to maxName characters (0: no
// cut) and returns how many rows it drew.
func renderTable(w io.Writer, topt output.TableOptions, s *watch.Sweep, colored, onlyTransitions bool, maxName int) (int, error) {
	topt.Width = 0 // fitted here, by shortening names
	t := output.NewTable(w, topt, "target", "outcome", "reason", "latency", "decision", "streak")
	mark := output.Paint(colored, color.FgYellow, color.Bold)
	rows := 0
	for i := range s.Items {
		it := &s.Items[i]
		if onlyTransitions && !it.Transition {
			continue
		}
		name := shorten(output.Untrusted(it.Endpoint.Name), maxName)
		switch {
		case it.Skipped:
			if onlyTransitions {
				continue
			}
			if err := t.Append(" "+name, "-", "-", "-", "skipped (in flight)", strconv.Itoa(it.Streak)); err != nil {
				return rows, err
			}
			rows++
			continue
		case it.Interrupted:
			continue
		}
		if it.Transition {
			name = mark.Sprint("*" + name)
		} else {
			name = " " + name
		}
		oc := output.Paint(colored, color.FgRed)
		if it.Result.Outcome == classify.Pass {
			oc = output.Paint(colored, color.FgGreen)
		}
		lat := "-"
		if d, ok := it.Result.Timings.Get(probe.PhaseTotal); ok {
			lat = output.FormatMS(d)
		}
		if err := t.Append(name, oc.Sprint(it.Result.Outcome), string(it.Result.Reason), lat,
			decisionColor(colored, it.Decision.Action).Sprint(it.Decision.Action), strconv.Itoa(it.Streak)); err != nil {
			return rows, err
		}
		rows++
	}
	if rows == 0 {
		return 0, nil
	}
	return rows, t.Render()
}

// shorten cuts name to n characters (0: no limit), keeping its start and
// end around a "…".
func shorten(name string, n int) string {
	r := []rune(name)
	if n <= 0 || len(r) <= n {
		return name
	}
	head := (n - 1) * 2 / 3
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// Compiled on first use: package initialisation is paid by every start.
var ansi = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;]*m") })

// tableWidth is the widest line of a rendered table, in characters on the
// screen (colour codes take none).
func tableWidth(s string) int {
	widest := 0
	for _, l := range strings.Split(ansi().ReplaceAllString(s, ""), "\n") {
		widest = max(widest, utf8.RuneCountInString(l))
	}
	return widest
}

func decisionColor(colored bool, a policy.Action) *color.Color {
	switch a {
	case policy.Redeploy:
		return output.Paint(colored, color.FgRed, color.Bold)
	case policy.Stay:
		return output.Paint(colored, color.FgGreen)
	}
	return output.Paint(colored, color.FgYellow)
}

// Result is one sweep: a line per target and the sweep's object, or
// the table on a terminal (and wherever text was asked for by name).
type Result struct {
	Sweep *watch.Sweep
	// Shard is --shard's K/N ("" without it).
	Shard string
	// Once says a --once run, whose sweep object carries Code, its exit
	// code.
	Once bool
	Code int
	// Fold is the --exit-1 decision, applied to each target's exit code.
	Fold func(int) int
	// StateWrite and MetricsWrite are how long the sweep's files took to
	// write (0: not written).
	StateWrite, MetricsWrite time.Duration
	// lines is set once the targets' lines were written (which carry each
	// hook's output): the table does not.
	lines     bool
	lineItems []itemLine
}

// WroteLines says the targets' lines were written (each carrying its
// hook's output), not the table.
func (x *Result) WroteLines() bool { return x.lines }

// Docs are a line per probed target (with -q: per transition) and the
// sweep's object.
func (x *Result) Docs(w render.Writer) render.Docs {
	x.lines = true
	s := x.Sweep
	n := len(s.Items)
	// A line each, pointing at its item: no line's value is made unless
	// encoding/json must write it (itemLine).
	x.lineItems = make([]itemLine, n)
	return render.Docs{N: n + 1, At: func(i int) (any, bool) {
		if i == n {
			return x.sweepObject(w.Quiet)
		}
		it := &s.Items[i]
		if it.Skipped || it.Interrupted || (w.Quiet && !it.Transition) {
			return nil, false
		}
		x.lineItems[i] = itemLine{it: it, fold: x.Fold}
		return &x.lineItems[i], true
	}}
}

func (x *Result) sweepObject(quiet bool) (any, bool) {
	if quiet {
		return nil, false
	}
	j := NewSweepJSON(x.Sweep, x.Shard)
	if x.StateWrite > 0 {
		ms := output.JSONMillis(x.StateWrite)
		j.Sweep.StateWriteMS = &ms
	}
	if x.MetricsWrite > 0 {
		ms := output.JSONMillis(x.MetricsWrite)
		j.Sweep.MetricsWriteMS = &ms
	}
	if x.Once {
		j.Sweep.ExitCode = &x.Code
	}
	return j, true
}

// Text is the table and the sweep's line on a terminal, or where text was
// asked for by name (-o text); elsewhere (a pipe, a file, a log) the lines
// a program reads (SPEC §6).
func (x *Result) Text(w render.Writer) error {
	if !w.OutTTY && !w.Named {
		return render.WriteDocs(w, x.Docs(w))
	}
	topt := w.OutTable()
	topt.Width = w.Columns(w.Getenv)
	if err := Table(w.Out, topt, x.Sweep, w.OutColor, w.Quiet); err != nil {
		fmt.Fprintf(w.Err, "healthctl: watch: table: %v\n", err)
	}
	if !w.Quiet {
		fmt.Fprintln(w.Out, Line(x.Sweep))
	}
	return nil
}
