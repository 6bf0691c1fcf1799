// Package board is watch --listen's board: each target's state after a
// sweep, made once per sweep from the same input as the metrics (so the
// page, /status.json and /metrics cannot disagree), with its two views:
// the /status.json document and the status page.
package board

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/metrics"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/report"
	"github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
)

// SchemaVersion is /status.json's schema_version: 2 since each target is
// its -o json line (1: a target object of the board's own).
const SchemaVersion = 2

// TimelineLen is how many sweeps of each target the timeline keeps.
const TimelineLen = 30

// Status is the last sweep's state of every target, as the page shows it
// and /status.json writes it (Document is its shape in JSON).
type Status struct {
	SchemaVersion int
	// Shard is --shard's K/N, or "all".
	Shard string
	// Sweep is the last completed sweep (nil before the first), in the
	// sweep line's shape.
	Sweep *watch.SweepCounts
	Fleet FleetStatus
	// Targets are in the targets' order (the page puts failing ones first).
	Targets []TargetStatus
	// Total and Next are a page's (?limit=N): how many targets there are
	// in all, and the after= of the next page ("" on the last).
	Total *int
	Next  string
	// lines are each target's object as watch -o json writes it, one
	// line after another: target i's ends at ends[from+i] (from: a page's
	// first target).
	lines []byte
	ends  []int
	from  int
}

// Line is target i's object (of st's Targets) as watch -o json writes its
// line for the same probe, without the newline.
func (st *Status) Line(i int) []byte {
	start := 0
	if k := st.from + i; k > 0 {
		start = st.ends[k-1]
	}
	return st.lines[start : st.ends[st.from+i]-1]
}

// FleetStatus is the fleet rule's verdict on the last sweep.
type FleetStatus struct {
	// Held is true when the fleet rule held a redeploy of the last sweep.
	Held       bool   `json:"held"`
	HeldFleet  int    `json:"held_fleet"`
	HeldBudget int    `json:"held_budget"`
	HoldWhy    string `json:"hold_why,omitempty"`
	// Groups are the groups the fleet rule held, each with its own why;
	// a held target's held_group is its place here, from 1.
	Groups []HeldGroup `json:"held_groups,omitempty"`
	// BudgetWhy says why the held_budget redeploys were deferred.
	BudgetWhy string `json:"budget_why,omitempty"`
}

// HeldGroup is one group the fleet rule held: as the sweep line's
// held_groups say it.
type HeldGroup struct {
	Targets int    `json:"targets"`
	Held    int    `json:"held"`
	Why     string `json:"why"`
}

// TargetStatus is one target on the board. In /status.json its board
// entry holds what the target's line (Status.Line: watch -o json's object)
// does not say; the fields tagged "-" are in the line.
type TargetStatus struct {
	// Target is the name as it is (the line's target, the state's key);
	// Name is it escaped for a terminal, as the page shows it.
	Target string `json:"target"`
	Name   string `json:"-"`
	// URL is redacted ("" for a target without one).
	URL string `json:"-"`
	// Outcome and Reason are "" for a target not probed yet.
	Outcome    classify.Outcome `json:"-"`
	Reason     classify.Reason  `json:"-"`
	Error      string           `json:"-"`
	HTTPStatus int              `json:"-"`
	LastProbe  time.Time        `json:"last_probe,omitzero"`
	// Since is when the target's current outcome began, as far as this
	// watcher saw (a restart starts it again).
	Since        time.Time        `json:"since,omitzero"`
	Streak       int              `json:"-"`
	Decision     *policy.Decision `json:"-"`
	Redeploys    int64            `json:"redeploys"`
	LastRedeploy time.Time        `json:"last_redeploy,omitzero"`
	HookPending  bool             `json:"hook_pending"`
	Recover      bool             `json:"recover"`
	// HeldGroup is the fleet group (from 1, in fleet.held_groups) whose
	// hold this target's decision is (0: none).
	HeldGroup int `json:"held_group,omitempty"`
	// graceAtRedeploy says the grace window began at the last redeploy
	// decision (no later start from the targets file): the page tells it
	// apart from a real boot when that decision restarted nothing.
	graceAtRedeploy bool
	// Timeline is the target's last sweeps, oldest first.
	Timeline Timeline `json:"timeline"`
}

// Timeline is a target's last sweeps, oldest first: in JSON a list of
// cells ({"outcome", "action"}); kept as two bytes a sweep (a fleet's
// status is kept whole between sweeps: 30 cells of two strings were
// ~1 KB a target).
type Timeline struct {
	cells [TimelineLen][2]uint8
	n     uint8
}

// Len is how many sweeps the timeline holds.
func (tl *Timeline) Len() int { return int(tl.n) }

// Cell is the timeline's i-th sweep, oldest first.
func (tl *Timeline) Cell(i int) Cell {
	c := tl.cells[i]
	return Cell{Outcome: outcomes[c[0]], Action: actions[c[1]]}
}

// Cells are the timeline's sweeps, oldest first.
func (tl *Timeline) Cells() []Cell {
	out := make([]Cell, tl.n)
	for i := range out {
		out[i] = tl.Cell(i)
	}
	return out
}

// MarshalJSON writes the cells as a list (outcomes and actions are
// identifiers: nothing to escape).
func (tl Timeline) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+int(tl.n)*40)
	b = append(b, '[')
	for i := range int(tl.n) {
		if i > 0 {
			b = append(b, ',')
		}
		c := tl.Cell(i)
		b = append(b, `{"outcome":`...)
		b = strconv.AppendQuote(b, string(c.Outcome))
		b = append(b, `,"action":`...)
		b = strconv.AppendQuote(b, string(c.Action))
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads a list of cells (a client's, a test's).
func (tl *Timeline) UnmarshalJSON(b []byte) error {
	var cells []Cell
	if err := json.Unmarshal(b, &cells); err != nil {
		return err
	}
	*tl = Timeline{}
	for _, c := range cells[max(0, len(cells)-TimelineLen):] {
		tl.cells[tl.n] = [2]uint8{index(outcomes, c.Outcome), index(actions, c.Action)}
		tl.n++
	}
	return nil
}

// Cell is one sweep of a target in its timeline.
type Cell struct {
	Outcome classify.Outcome `json:"outcome"`
	Action  policy.Action    `json:"action"`
}

// Failing reports whether the target's last probe did not pass.
func (t *TargetStatus) Failing() bool { return t.Outcome != "" && t.Outcome != classify.Pass }

// Snapshot is what one sweep published: the metrics' bytes (gzip) and
// the status made from the same input.
type Snapshot struct {
	Metrics []byte
	Status  *Status
	// At is when it was published.
	At time.Time
}

// Board holds each target's timeline and since, and the last snapshot.
type Board struct {
	mu    sync.Mutex
	marks map[string]*track
	cur   atomic.Pointer[Snapshot]
}

// LinesSize is the size of the last snapshot's lines (0: none yet).
func (b *Board) LinesSize() int {
	if c := b.Current(); c != nil {
		return len(c.Status.lines)
	}
	return 0
}

// Current is the last snapshot published (nil before the first).
func (b *Board) Current() *Snapshot { return b.cur.Load() }

// Tracked is how many targets the board keeps a memory of.
func (b *Board) Tracked() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.marks)
}

// track is a target's memory between sweeps: a ring of cells (an outcome
// and an action, a byte each) and when its outcome began.
type track struct {
	ring    [TimelineLen][2]uint8
	n, head uint8
	outcome classify.Outcome
	since   time.Time
	lastN   int64
}

var (
	outcomes = []classify.Outcome{"", classify.Pass, classify.Unreachable, classify.TLS, classify.Timeout, classify.Refused, classify.DNS, classify.Unknown}
	actions  = []policy.Action{"", policy.Hold, policy.Stay, policy.PendingTLS, policy.IgnoreTimeout, policy.IgnoreGrace, policy.IgnoreBlip, policy.Redeploy, policy.HoldFleet, policy.HoldBudget}
)

func index[T comparable](list []T, v T) uint8 {
	for i, x := range list {
		if x == v {
			return uint8(i)
		}
	}
	return 0
}

func (t *track) push(o classify.Outcome, a policy.Action) {
	t.ring[t.head] = [2]uint8{index(outcomes, o), index(actions, a)}
	t.head = (t.head + 1) % TimelineLen
	if t.n < TimelineLen {
		t.n++
	}
}

func (t *track) timeline() Timeline {
	tl := Timeline{n: t.n}
	start := (int(t.head) - int(t.n) + TimelineLen) % TimelineLen
	for i := range int(t.n) {
		tl.cells[i] = t.ring[(start+i)%TimelineLen]
	}
	return tl
}

// Publish records a sweep's input (the metrics' own), its metrics bytes
// (gzip) and its targets' lines (EncodeLines of the same input) as the
// board's snapshot.
func (b *Board) Publish(in metrics.Input, m []byte, now time.Time, lines Lines) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.marks == nil {
		b.marks = map[string]*track{}
	}
	shard := in.Shard
	if shard == "" {
		shard = "all"
	}
	st := &Status{SchemaVersion: SchemaVersion, Shard: shard, Targets: make([]TargetStatus, len(in.Latest))}
	n := int64(0)
	if s := in.Sweep; s != nil {
		n = s.N
		c := s.Counts()
		st.Sweep = &c
		st.Fleet = FleetStatus{Held: s.HeldFleet+s.HeldBudget > 0, HeldFleet: s.HeldFleet, HeldBudget: s.HeldBudget,
			HoldWhy: output.Untrusted(s.HoldWhy), BudgetWhy: output.Untrusted(s.BudgetWhy)}
		for _, g := range s.HeldGroups {
			st.Fleet.Groups = append(st.Fleet.Groups, HeldGroup{Targets: g.Targets, Held: g.Held, Why: output.Untrusted(g.Why)})
		}
	}
	keep := make(map[string]*track, len(in.Latest))
	for i := range in.Latest {
		it := &in.Latest[i]
		name := it.Endpoint.Name
		t := b.marks[name]
		if t == nil {
			t = &track{}
		}
		keep[name] = t
		r := &it.Result
		ts := TargetStatus{Target: name, Name: output.Untrusted(name), URL: output.Untrusted(it.Endpoint.URL), Recover: it.Endpoint.Recover}
		var e state.Entry
		if in.State != nil {
			e = in.State.Targets[name]
		}
		ts.Streak, ts.Redeploys, ts.LastRedeploy, ts.HookPending = e.Streak, e.Redeploys, e.LastRedeploy.UTC(), e.HookPending
		ts.graceAtRedeploy = !e.LastRedeploy.IsZero() && e.StartedAt.Equal(e.LastRedeploy)
		if r.Outcome != "" {
			if r.Outcome != t.outcome || t.since.IsZero() {
				t.outcome, t.since = r.Outcome, r.Started
			}
			// The latest item is this sweep's when the target was
			// probed in it (its probe started at or after the sweep).
			if n > 0 && t.lastN != n && !r.Started.Before(in.Sweep.Started) {
				t.push(r.Outcome, it.Decision.Action)
				t.lastN = n
			}
			d := it.Decided()
			d.Why = output.Untrusted(d.Why)
			ts.Outcome, ts.Reason, ts.HTTPStatus, ts.LastProbe, ts.Since = r.Outcome, r.Reason, r.HTTPStatus, r.Started.UTC(), t.since.UTC()
			ts.Error = errorLine(r.Error)
			ts.Decision = &d
			if d.Action == policy.HoldFleet {
				ts.HeldGroup = int(it.HeldGroup)
			}
		}
		ts.Timeline = t.timeline()
		st.Targets[i] = ts
	}
	b.marks = keep
	st.lines, st.ends = lines.b, lines.ends
	if len(st.ends) != len(st.Targets) {
		// Lines of another input (a bug): each target's says so
		// rather than another's.
		st.lines, st.ends = unprobedLines(in.Latest)
	}
	b.cur.Store(&Snapshot{Metrics: m, Status: st, At: now})
}

// errorLine is a probe's error text as one line, escaped (it is the
// server's words as much as ours).
func errorLine(s string) string {
	if s == "" {
		return ""
	}
	return output.Untrusted(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " "))
}

// unprobed is the line of a target not probed yet: watch -o json writes
// none; /status.json names it.
type unprobed struct {
	SchemaVersion int    `json:"schema_version"`
	Target        string `json:"target"`
	URL           string `json:"url"`
}

// Lines are a sweep's targets' -o json lines, one after another.
type Lines struct {
	b    []byte
	ends []int
}

// EncodeLines encodes each item's -o json line (report.NewWatchJSON through
// output.JSONLines, as watch writes its lines: on every P, in order) into
// one buffer, and where each ends (after its newline); fold is the
// --exit-1 decision (nil: none), as the sweep's lines apply it. The buffer
// starts at size (the last sweep's, LinesSize): grown by doubling it was
// twice the lines at their peak, and copied to be kept.
func EncodeLines(items []watch.Item, fold func(int) int, size int) Lines {
	if fold == nil {
		fold = func(c int) int { return c }
	}
	var buf bytes.Buffer
	buf.Grow(size + size/16)
	err := output.JSONLines(&buf, len(items), func(i int) (any, bool) {
		it := &items[i]
		if it.Result.Outcome == "" {
			return unprobed{SchemaVersion: output.SchemaVersion, Target: it.Endpoint.Name, URL: it.Endpoint.URL}, true
		}
		return report.NewWatchJSON(it, fold), true
	})
	b := buf.Bytes()
	ends := make([]int, 0, len(items))
	for at := 0; at < len(b); {
		n := bytes.IndexByte(b[at:], '\n')
		if n < 0 {
			break
		}
		at += n + 1
		ends = append(ends, at)
	}
	if err != nil || len(ends) != len(items) {
		// Cannot happen (a bug: a value that does not encode).
		return Lines{}
	}
	if cap(b) > len(b)+len(b)/4 {
		b = bytes.Clone(b) // kept until the next sweep: no spare capacity
	}
	return Lines{b, ends}
}

// unprobedLines are the lines of items none of which was probed.
func unprobedLines(items []watch.Item) ([]byte, []int) {
	var b []byte
	ends := make([]int, 0, len(items))
	for _, it := range items {
		line, _ := json.Marshal(unprobed{SchemaVersion: output.SchemaVersion, Target: it.Endpoint.Name, URL: it.Endpoint.URL})
		b = append(append(b, output.JSONEscape(line)...), '\n')
		ends = append(ends, len(b))
	}
	return b, ends
}
