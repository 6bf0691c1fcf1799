package output

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/watch"
)

// WatchJSON is one target in one sweep: the probe result (SPEC.md §9) with
// its target name and decision, the streak after it, whether it is a
// transition, and the hook run, if any.
type WatchJSON struct {
	ResultJSON
	Streak     int               `json:"streak"`
	Transition bool              `json:"transition"`
	Hook       *watch.HookResult `json:"hook,omitempty"`
}

// NewWatchJSON converts one probed item; exitCode maps its outcome.
func NewWatchJSON(it *watch.Item, exitCode int) WatchJSON {
	d := it.Decision
	j := WatchJSON{ResultJSON: NewResultJSON(it.Result, &d, exitCode), Streak: it.State.Streak, Transition: it.Transition, Hook: it.Hook}
	j.Target = it.Target.Name
	if j.URL == "" {
		j.URL = it.Target.URL
	}
	return j
}

// SweepJSON is the line that ends each sweep in JSON output:
// {"schema_version":1,"sweep":{...}}.
type SweepJSON struct {
	SchemaVersion int          `json:"schema_version"`
	Sweep         SweepSummary `json:"sweep"`
}

// SweepSummary counts one sweep's targets.
type SweepSummary struct {
	// N numbers the sweeps (it continues across runs sharing a state file).
	N          int64     `json:"n"`
	Started    time.Time `json:"started"`
	DurationMS float64   `json:"duration_ms"`
	// Targets is how many targets the sweep covered (after --shard).
	Targets int `json:"targets"`
	// Probed = Pass + Fail; Skipped were still in flight from a sweep before.
	Probed       int    `json:"probed"`
	Skipped      int    `json:"skipped"`
	Pass         int    `json:"pass"`
	Fail         int    `json:"fail"`
	Redeploys    int    `json:"redeploys"`
	HookFailures int    `json:"hook_failures"`
	Transitions  int    `json:"transitions"`
	Interrupted  bool   `json:"interrupted"`
	Shard        string `json:"shard,omitempty"`
}

// NewSweepJSON summarises a sweep.
func NewSweepJSON(s *watch.Sweep, shard string) SweepJSON {
	return SweepJSON{SchemaVersion: SchemaVersion, Sweep: SweepSummary{
		N: s.N, Started: s.Started.UTC(), DurationMS: ms(s.Duration), Targets: s.Targets,
		Probed: s.Probed, Skipped: s.Skipped, Pass: s.Pass, Fail: s.Fail, Redeploys: s.Redeploys,
		HookFailures: s.HookFailures, Transitions: s.Transitions, Interrupted: s.Interrupted, Shard: shard,
	}}
}

// SweepLine is the one-line text summary of a sweep.
func SweepLine(s *watch.Sweep) string {
	line := fmt.Sprintf("sweep %d: %d targets, %d pass, %d fail, %d skipped, %d redeploy in %s",
		s.N, s.Targets, s.Pass, s.Fail, s.Skipped, s.Redeploys, FormatMS(s.Duration))
	if s.HookFailures > 0 {
		line += fmt.Sprintf(", %d hook failures", s.HookFailures)
	}
	if s.Interrupted {
		line += " (interrupted)"
	}
	return line
}

// WatchTable draws one sweep as a table: target, outcome, reason, latency,
// decision, streak. A transition is marked with "*" before the target (and
// in colour: the new decision stands out). onlyTransitions keeps just those
// rows (-q).
func WatchTable(w io.Writer, s *watch.Sweep, colored, onlyTransitions bool) error {
	t := tablewriter.NewTable(w)
	t.Header("target", "outcome", "reason", "latency", "decision", "streak")
	mark := paint(colored, color.FgYellow, color.Bold)
	rows := 0
	for i := range s.Items {
		it := &s.Items[i]
		if onlyTransitions && !it.Transition {
			continue
		}
		name := it.Target.Name
		switch {
		case it.Skipped:
			if onlyTransitions {
				continue
			}
			if err := t.Append(" "+name, "-", "-", "-", "skipped (in flight)", strconv.Itoa(it.State.Streak)); err != nil {
				return err
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
		oc := paint(colored, color.FgRed)
		if it.Result.Outcome == classify.Pass {
			oc = paint(colored, color.FgGreen)
		}
		lat := "-"
		if d, ok := it.Result.Timings[probe.PhaseTotal]; ok {
			lat = FormatMS(d)
		}
		if err := t.Append(name, oc.Sprint(it.Result.Outcome), string(it.Result.Reason), lat,
			decisionColor(colored, it.Decision.Action).Sprint(it.Decision.Action), strconv.Itoa(it.State.Streak)); err != nil {
			return err
		}
		rows++
	}
	if rows == 0 {
		return nil
	}
	return t.Render()
}

func decisionColor(colored bool, a policy.Action) *color.Color {
	switch a {
	case policy.Redeploy:
		return paint(colored, color.FgRed, color.Bold)
	case policy.Stay:
		return paint(colored, color.FgGreen)
	}
	return paint(colored, color.FgYellow)
}
