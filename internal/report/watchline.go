package report

import (
	"strings"

	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/watch"
)

// WatchJSON is one target in one sweep: the probe result with
// its target name and decision, the streak after it, whether it is a
// transition, and the hook run, if any. It is watch's JSON line and each
// target of the listener's /status.json: one object, one encoder.
type WatchJSON struct {
	ResultJSON
	Streak     int               `json:"streak"`
	Transition bool              `json:"transition"`
	Hook       *watch.HookResult `json:"hook,omitempty"`
}

// MarshalJSON writes the result's fields, then the item's own (the
// embedded ResultJSON's MarshalJSON would write only its own).
func (j WatchJSON) MarshalJSON() ([]byte, error) {
	b, err := j.ResultJSON.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return AppendFields(b, struct {
		Streak     int               `json:"streak"`
		Transition bool              `json:"transition"`
		Hook       *watch.HookResult `json:"hook,omitempty"`
	}{j.Streak, j.Transition, j.Hook})
}

// Value is j for encoding/json, encoded once. A result without a kind's
// answer (an HTTP probe's, most lines of a sweep) is watchFields: the
// result's fields and the item's in one pass. MarshalJSON, which puts an
// answer under its kind's name, makes bytes that encoding/json then checks
// and copies again.
func (j *WatchJSON) Value() any {
	if j.Answer != nil {
		return *j
	}
	return watchFields{(*ResultFields)(&j.ResultJSON), j.Streak, j.Transition, j.Hook}
}

// watchFields is WatchJSON without its MarshalJSON, for a result without a
// kind's answer: the same bytes (TestLineValueAsMarshalJSON).
type watchFields struct {
	*ResultFields
	Streak     int               `json:"streak"`
	Transition bool              `json:"transition"`
	Hook       *watch.HookResult `json:"hook,omitempty"`
}

// NewWatchJSON converts one probed item; fold is the --exit-1 decision
// applied to its outcome's exit code (and to each address's).
func NewWatchJSON(it *watch.Item, fold func(int) int) WatchJSON {
	var j WatchJSON
	d := it.Decided()
	j.Fill(it, fold, &d)
	return j
}

// Fill makes j what NewWatchJSON makes of the item, with d (a copy of the
// item's decision) as its decision, keeping j's maps (the lines of a sweep
// may be encoded through a few of them).
func (j *WatchJSON) Fill(it *watch.Item, fold func(int) int, d *policy.Decision) {
	j.ResultJSON.Fill(it.Result, d, fold(exitcode.ForResult(it.Result.Outcome, it.Result.Reason)))
	j.Streak, j.Transition, j.Hook = it.Streak, it.Transition, it.Hook
	j.FoldAddresses(fold)
	// The name as it is: it is the target's identity, the state file's key
	// (JSON both), so it must read back as the same string; the JSON
	// encoder writes every terminal-active character of it as \uXXXX. A
	// hook's output is only shown: escaped as in the table, lines kept.
	j.Target = it.Endpoint.Name
	if it.Hook != nil && it.Hook.Output != "" {
		h := *it.Hook
		lines := strings.Split(h.Output, "\n") // lines stay lines
		for i, l := range lines {
			lines[i] = output.Untrusted(l)
		}
		h.Output = strings.Join(lines, "\n")
		j.Hook = &h
	}
	if j.URL == "" {
		j.URL = it.Endpoint.URL
	}
}
