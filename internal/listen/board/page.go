package board

import (
	"bytes"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// The status page is written by hand with html.EscapeString, not with
// html/template: html/template runs on text/template's execution, which
// makes the linker keep every exported method (.ci/run's start-up guard
// refuses the binary that links it). Every text from a target, a server or
// the targets file went through output.Untrusted (control characters as
// \x1b text) when the board was made, and is HTML-escaped here, in element
// text and attribute values alike.

// PageRows is how many targets the page lists at most; the rest are
// counted, reachable through the filters, and in /status.json.
const PageRows = 500

// FailingOnlyOver is the fleet size past which the page shows the failing
// targets only unless asked (?show=all): at 500 targets the failing ones
// are what an on-call engineer opens it for.
const FailingOnlyOver = 50

// esc is html.EscapeString (<, >, &, ' and ").
func esc(s string) string { return html.EscapeString(s) }

// pageFilter is the page's filter, from its query parameters: show=
// failing|all (the default: failing past FailingOnlyOver targets),
// outcome=, reason= and decision= (exact values; "" for any).
type pageFilter struct {
	show                      string
	outcome, reason, decision string
}

// parseFilter reads the page's query; an unknown show= is an error.
func parseFilter(q url.Values) (pageFilter, error) {
	f := pageFilter{show: q.Get("show"), outcome: q.Get("outcome"), reason: q.Get("reason"), decision: q.Get("decision")}
	switch f.show {
	case "", "all", "failing":
	default:
		return f, fmt.Errorf("show=%q: want failing or all", f.show)
	}
	return f, nil
}

// failingOnly says whether the filter shows failing targets only, for a
// board of n targets.
func (f pageFilter) failingOnly(n int) bool {
	if f.show == "" {
		// A reason, an outcome or a decision asked for is shown whole.
		return n > FailingOnlyOver && f.outcome == "" && f.reason == "" && f.decision == ""
	}
	return f.show == "failing"
}

func (f pageFilter) keep(t *TargetStatus, failingOnly bool) bool {
	if failingOnly && !t.Failing() {
		return false
	}
	if f.outcome != "" && string(t.Outcome) != f.outcome {
		return false
	}
	if f.reason != "" && string(t.Reason) != f.reason {
		return false
	}
	if f.decision != "" && (t.Decision == nil || string(t.Decision.Action) != f.decision) {
		return false
	}
	return true
}

// href is the page's address with the filter f (relative: the page links
// nowhere else).
func (f pageFilter) href() string {
	q := url.Values{}
	if f.show != "" {
		q.Set("show", f.show)
	}
	if f.outcome != "" {
		q.Set("outcome", f.outcome)
	}
	if f.reason != "" {
		q.Set("reason", f.reason)
	}
	if f.decision != "" {
		q.Set("decision", f.decision)
	}
	if len(q) == 0 {
		return "./"
	}
	return "?" + q.Encode()
}

// WritePage writes the status page of st (nil: no sweep yet) at now, with
// the filter of the query q (an unknown show= is an error: nothing is
// written); hook says an --on-redeploy hook is set.
func WritePage(b *bytes.Buffer, st *Status, now time.Time, refresh int, q url.Values, hook bool) error {
	f, err := parseFilter(q)
	if err != nil {
		return err
	}
	writePage(b, st, now, refresh, pageOpts{filter: f, hook: hook})
	return nil
}

// pageOpts are what the page shows beside the board: the filter, and
// whether an --on-redeploy hook is set.
type pageOpts struct {
	filter pageFilter
	hook   bool
}

const pageStyle = `
body{font:14px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:10px;background:#fafafa;color:#1b1b1b}
h1{font-size:18px;margin:0 0 4px}
p{margin:0 0 6px}
.summary{color:#444}
.counts a,.filter a{white-space:nowrap}
.counts b{font-weight:600}
a{color:#0b57d0}
.hold{border:2px solid #b35c00;background:#fff1de;padding:6px 10px;margin:0 0 8px;border-radius:6px}
.hold ol{margin:4px 0 0;padding-left:20px}
.hold li{margin:0 0 4px}
.members{font-size:13px;color:#444}
.m{white-space:nowrap}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;vertical-align:top;padding:3px 6px;border-bottom:1px solid #e6e6e6}
th{font-size:11px;text-transform:uppercase;color:#666}
tr.group td{background:#fff1de;font-size:13px;border-top:2px solid #b35c00}
tr.failing td:first-child{border-left:4px solid #c62828}
tr.passing td:first-child{border-left:4px solid #2e7d32}
tr.waiting td:first-child{border-left:4px solid #9e9e9e}
.name{font-weight:600;overflow-wrap:anywhere}
.why,.url,.err{font-size:13px;color:#444;overflow-wrap:anywhere;margin:2px 0}
.err{font-family:ui-monospace,monospace;color:#8e1b1b}
.badge{display:inline-block;padding:0 5px;border-radius:4px;color:#fff;font-weight:600;font-size:13px}
.nr{display:inline-block;padding:0 4px;border:1px solid #6a1b9a;color:#6a1b9a;border-radius:4px;font-size:11px;font-weight:600;white-space:nowrap}
code{font-size:13px}
summary{cursor:pointer}
.o-pass,.p{background:#2e7d32}.o-refused,.f{background:#c62828}.o-unreachable,.u{background:#ad1457}.o-dns,.d{background:#6a1b9a}
.o-tls,.s{background:#e65100}.o-timeout,.t{background:#f9a825;color:#1b1b1b}.o-unknown,.k{background:#616161}.o-none,.n{background:#bdbdbd}
.tl{display:flex;gap:1px;flex-wrap:nowrap}
.tl i{display:inline-block;width:7px;height:14px;border-radius:1px}
.tl i.i{opacity:.35}
.tl i.r{outline:2px solid #000;outline-offset:-1px}
.more,.legend{color:#555;margin-top:8px;font-size:13px}
@media (max-width:700px){
 body{padding:6px}
 table,tbody,tr,td{display:block}
 thead{display:none}
 tr.target{display:flex;flex-wrap:wrap;gap:0 8px;padding:3px 4px;border-bottom:1px solid #e6e6e6}
 tr.failing{border-left:4px solid #c62828}tr.passing{border-left:4px solid #2e7d32}tr.waiting{border-left:4px solid #9e9e9e}
 td{border:0;padding:0}
 tr.target td:first-child{border-left:0;flex-basis:100%}
 td.streak::before{content:"streak ";color:#666;font-size:12px}
 td.decision{flex:1 0 50%}
 td.decision:has(details[open]){flex-basis:100%}
 tr.target td.sweeps{margin-left:auto;align-self:center}
 .tl i{width:3px;height:10px}
}
`

// counted is a value and how many targets have it, in first-seen order.
type counted struct {
	val string
	n   int
}

func count(list []counted, v string) []counted {
	for i := range list {
		if list[i].val == v {
			list[i].n++
			return list
		}
	}
	return append(list, counted{v, 1})
}

// writePage writes the status page of st (nil: no sweep yet) at now.
func writePage(b *bytes.Buffer, st *Status, now time.Time, refresh int, o pageOpts) {
	title := "healthctl watch"
	all := 0
	failing := 0
	var outcomes, reasons, decisions []counted
	if st != nil {
		all = len(st.Targets)
		for i := range st.Targets {
			t := &st.Targets[i]
			if t.Failing() {
				failing++
				reasons = count(reasons, string(t.Reason))
			}
			if t.Outcome != "" {
				outcomes = count(outcomes, string(t.Outcome))
			}
			if t.Decision != nil {
				decisions = count(decisions, string(t.Decision.Action))
			}
		}
		title = strconv.Itoa(failing) + " of " + strconv.Itoa(all) + " failing · healthctl watch"
	}
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<meta http-equiv=\"refresh\" content=\"" + strconv.Itoa(refresh) + "\">\n")
	b.WriteString("<title>" + esc(title) + "</title>\n<style>" + pageStyle + "</style></head>\n<body>\n")
	b.WriteString("<h1>healthctl watch</h1>\n")
	if st == nil || st.Sweep == nil {
		b.WriteString("<p class=\"summary\" id=\"summary\">No sweep has completed yet; this page refreshes itself.</p>\n</body></html>\n")
		return
	}
	sw := st.Sweep
	f := o.filter
	b.WriteString("<p class=\"summary\" id=\"summary\">Sweep " + strconv.FormatInt(sw.N, 10) + " at " +
		esc(sw.Started.UTC().Format("2006-01-02 15:04:05 UTC")) + " (" + esc(ago(now, sw.Started)) + ") · <b>" +
		strconv.Itoa(failing) + " of " + strconv.Itoa(all) + " failing</b> · shard " + esc(st.Shard) +
		" · <a href=\"status.json\">status.json</a> · <a href=\"metrics\">metrics</a></p>\n")
	// The counts, each a link to its filter.
	b.WriteString("<p class=\"counts\" id=\"counts\">Outcomes: ")
	writeCounts(b, outcomes, func(v string) pageFilter { return pageFilter{show: "all", outcome: v} }, f.outcome)
	if len(reasons) > 0 {
		b.WriteString("<br>Failing by reason: ")
		writeCounts(b, reasons, func(v string) pageFilter { return pageFilter{show: "all", reason: v} }, f.reason)
	}
	b.WriteString("<br>Decisions: ")
	writeCounts(b, decisions, func(v string) pageFilter { return pageFilter{show: "all", decision: v} }, f.decision)
	b.WriteString("</p>\n")

	// Who the fleet rule held: one sentence a group, its members named.
	rows := make([]*TargetStatus, len(st.Targets))
	for i := range st.Targets {
		rows[i] = &st.Targets[i]
	}
	writeHold(b, st.Fleet, rows)

	// Failing first: the held groups in order, then the longest-failing;
	// the rest in the targets' order.
	slices.SortStableFunc(rows, func(a, c *TargetStatus) int {
		switch fa, fc := a.Failing(), c.Failing(); {
		case fa && !fc:
			return -1
		case fc && !fa:
			return 1
		case fa && fc:
			if ga, gc := groupRank(a), groupRank(c); ga != gc {
				return ga - gc
			}
			return a.Since.Compare(c.Since)
		}
		return 0
	})
	only := f.failingOnly(all)
	kept := rows[:0:0]
	for _, t := range rows {
		if f.keep(t, only) {
			kept = append(kept, t)
		}
	}
	b.WriteString("<p class=\"filter\" id=\"filter\">Showing ")
	switch {
	case only:
		b.WriteString("<b>failing</b> targets")
	default:
		b.WriteString("<b>all</b> targets")
	}
	for _, kv := range [][2]string{{"outcome", f.outcome}, {"reason", f.reason}, {"decision", f.decision}} {
		if kv[1] != "" {
			b.WriteString(" with " + kv[0] + " <code>" + esc(kv[1]) + "</code>")
		}
	}
	b.WriteString(": " + strconv.Itoa(len(kept)) + " of " + strconv.Itoa(all) + " · ")
	if only {
		b.WriteString("<a href=\"" + esc(pageFilter{show: "all", outcome: f.outcome, reason: f.reason, decision: f.decision}.href()) + "\">show all</a>")
	} else {
		b.WriteString("<a href=\"" + esc(pageFilter{show: "failing", outcome: f.outcome, reason: f.reason, decision: f.decision}.href()) + "\">failing only</a>")
	}
	if f.outcome != "" || f.reason != "" || f.decision != "" {
		b.WriteString(" · <a href=\"./\">clear the filter</a>")
	}
	b.WriteString("</p>\n")

	b.WriteString("<table>\n<thead><tr><th>target</th><th>outcome · reason</th><th>since</th><th>streak</th><th>decision</th><th>last " +
		strconv.Itoa(TimelineLen) + " sweeps</th></tr></thead>\n<tbody>\n")
	shown := min(len(kept), PageRows)
	group := 0
	for _, t := range kept[:shown] {
		if g := t.HeldGroup; g != 0 && g != group && g <= len(st.Fleet.Groups) {
			group = g
			fg := st.Fleet.Groups[g-1]
			b.WriteString("<tr class=\"group\" id=\"group-" + strconv.Itoa(g) + "-rows\"><td colspan=\"6\">Held by the fleet rule: <a href=\"#group-" +
				strconv.Itoa(g) + "\">group " + strconv.Itoa(g) + "</a> (" + strconv.Itoa(fg.Held) + " held of " + strconv.Itoa(fg.Targets) + "; its why is above)</td></tr>\n")
		}
		writeRow(b, t, now, st.Fleet.Groups, o.hook)
	}
	b.WriteString("</tbody></table>\n")
	if shown < len(kept) {
		b.WriteString("<p class=\"more\" id=\"more\">" + strconv.Itoa(len(kept)-shown) + " more targets match; narrow the filter above, or read them in <a href=\"status.json\">status.json</a>.</p>\n")
	}
	if len(kept) == 0 {
		b.WriteString("<p class=\"more\">No target matches the filter.</p>\n")
	}
	b.WriteString("<p class=\"legend\">Sweeps: oldest first, coloured by outcome; faded: a failure inside the grace window, a blip or a slow host, which the streak does not count; outlined: a redeploy decision. Click a decision for its why.</p>\n")
	b.WriteString("</body></html>\n")
}

// groupRank orders the failing: the held groups in their order, then the rest.
func groupRank(t *TargetStatus) int {
	if t.HeldGroup > 0 {
		return t.HeldGroup
	}
	return 1 << 20
}

func writeCounts(b *bytes.Buffer, list []counted, to func(string) pageFilter, cur string) {
	for i, c := range list {
		if i > 0 {
			b.WriteString(" · ")
		}
		if c.val == cur {
			b.WriteString("<b>" + esc(c.val) + " " + strconv.Itoa(c.n) + "</b>")
			continue
		}
		b.WriteString("<a href=\"" + esc(to(c.val).href()) + "\">" + esc(c.val) + " " + strconv.Itoa(c.n) + "</a>")
	}
	if len(list) == 0 {
		b.WriteString("none yet")
	}
}

// MaxMembers is how many of a held group's members the box names; the
// rest are counted (the held rows list them all).
const MaxMembers = 8

// writeHold writes the fleet hold's box: each held group's why once, with
// its members named compactly.
func writeHold(b *bytes.Buffer, fl FleetStatus, rows []*TargetStatus) {
	if !fl.Held {
		return
	}
	b.WriteString("<div class=\"hold\" id=\"hold\" role=\"alert\"><b>Redeploys held by the fleet rule</b> (")
	b.WriteString(strconv.Itoa(fl.HeldFleet) + " hold-fleet, " + strconv.Itoa(fl.HeldBudget) + " hold-budget)")
	if len(fl.Groups) == 0 {
		b.WriteString(": " + esc(fl.HoldWhy) + "</div>\n")
		return
	}
	members := make([][]string, len(fl.Groups))
	for _, t := range rows {
		if g := t.HeldGroup; g > 0 && g <= len(members) {
			members[g-1] = append(members[g-1], t.Name)
		}
	}
	b.WriteString("<ol>\n")
	for i, g := range fl.Groups {
		n := strconv.Itoa(i + 1)
		b.WriteString("<li id=\"group-" + n + "\"><span class=\"why group-why\">" + esc(g.Why) + "</span>")
		m := members[i]
		b.WriteString("<div class=\"members\">" + strconv.Itoa(len(m)) + " held: ")
		for j, name := range m[:min(len(m), MaxMembers)] {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("<span class=\"m\">" + esc(name) + "</span>")
		}
		if len(m) > MaxMembers {
			b.WriteString(" and " + strconv.Itoa(len(m)-MaxMembers) + " more (<a href=\"#group-" + n + "-rows\">their rows</a>)")
		}
		b.WriteString("</div></li>\n")
	}
	b.WriteString("</ol>")
	if fl.HeldBudget > 0 && fl.BudgetWhy != "" {
		b.WriteString("<div class=\"why\">hold-budget: " + esc(fl.BudgetWhy) + "</div>")
	}
	b.WriteString("</div>\n")
}
