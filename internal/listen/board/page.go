package listen

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
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

func (s *Service) servePage(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		http.Error(w, "healthctl: page: "+err.Error(), http.StatusBadRequest)
		return
	}
	var b bytes.Buffer
	writePage(&b, s.Status(), s.cfg.Now(), s.cfg.Refresh, pageOpts{filter: f, hook: s.cfg.Hook})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// Nothing the page needs comes from anywhere else.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; frame-ancestors 'none'")
	w.Write(b.Bytes())
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

// cellClass is a timeline cell's class: its outcome's letter, "i" when its
// decision did not count in the streak, "r" for a redeploy.
func cellClass(c Cell) string {
	cls := "n"
	switch c.Outcome {
	case classify.Pass:
		cls = "p"
	case classify.Refused:
		cls = "f"
	case classify.Unreachable:
		cls = "u"
	case classify.DNS:
		cls = "d"
	case classify.TLS:
		cls = "s"
	case classify.Timeout:
		cls = "t"
	case classify.Unknown:
		cls = "k"
	}
	switch c.Action {
	case policy.IgnoreGrace, policy.IgnoreBlip, policy.IgnoreTimeout:
		cls += " i"
	case policy.Redeploy:
		cls += " r"
	}
	return cls
}

// restarts says whether a redeploy decision for t runs a hook: without
// one nothing is restarted.
func restarts(t *TargetStatus, hook bool) bool { return hook && t.Recover }

// notRestarted says why a redeploy decision for t restarted nothing.
func notRestarted(t *TargetStatus) string {
	if !t.Recover {
		return "recover: false"
	}
	return "no --on-redeploy hook"
}

func writeRow(b *bytes.Buffer, t *TargetStatus, now time.Time, groups []HeldGroup, hook bool) {
	class := "passing"
	switch {
	case t.Outcome == "":
		class = "waiting"
	case t.Failing():
		class = "failing"
	}
	b.WriteString("<tr class=\"target " + class + "\" data-target=\"" + esc(t.Name) + "\" data-outcome=\"" + esc(string(t.Outcome)) +
		"\" data-reason=\"" + esc(string(t.Reason)) + "\"")
	if !t.Recover {
		b.WriteString(" data-recover=\"false\"")
	}
	b.WriteString(">\n<td><span class=\"name\">" + esc(t.Name) + "</span>")
	if !t.Recover {
		b.WriteString(" <span class=\"nr\" title=\"recover: false: decided, never restarted\">recover: false</span>")
	}
	b.WriteString("</td>\n")
	if t.Outcome == "" {
		b.WriteString("<td class=\"outcome\"><span class=\"badge o-none\">not probed yet</span></td>\n<td></td><td></td><td></td><td></td></tr>\n")
		return
	}
	b.WriteString("<td class=\"outcome\"><span class=\"badge o-" + esc(string(t.Outcome)) + "\">" + esc(string(t.Outcome)) +
		"</span> <code class=\"reason\">" + esc(string(t.Reason)) + "</code>")
	if t.HTTPStatus != 0 {
		b.WriteString(" <code>" + strconv.Itoa(t.HTTPStatus) + "</code>")
	}
	b.WriteString("</td>\n")
	b.WriteString("<td class=\"since\"><time datetime=\"" + esc(t.Since.UTC().Format(time.RFC3339)) + "\" title=\"" +
		esc(t.Since.UTC().Format("2006-01-02 15:04:05 UTC")) + "\">" + esc(ago(now, t.Since)) + "</time></td>\n")
	b.WriteString("<td class=\"streak\">" + strconv.Itoa(t.Streak) + "</td>\n")
	b.WriteString("<td class=\"decision\"><details><summary>")
	d := t.Decision
	if d != nil {
		b.WriteString("<b>" + esc(string(d.Action)) + "</b>")
		if d.Action == policy.Redeploy && !restarts(t, hook) {
			b.WriteString(" (not run: " + esc(notRestarted(t)) + ")")
		}
		if t.HeldGroup > 0 {
			b.WriteString(" · group " + strconv.Itoa(t.HeldGroup))
		}
	}
	b.WriteString("</summary>")
	if d != nil {
		why := d.Why
		if g := t.HeldGroup; g > 0 && g <= len(groups) {
			// The group's sentence is said once, in the box above.
			why = strings.Replace(why, groups[g-1].Why, "the fleet rule held group "+strconv.Itoa(g)+" (its why is above)", 1)
		}
		if !restarts(t, hook) && t.graceAtRedeploy {
			// The grace window restarted at a redeploy decision that ran
			// nothing: nothing is booting.
			why = strings.Replace(why, "still booting, ignore it", "counted from a redeploy decision that restarted nothing ("+notRestarted(t)+"), ignore it", 1)
		}
		b.WriteString("<div class=\"why\">" + esc(why) + "</div>")
	}
	if t.Error != "" {
		b.WriteString("<div class=\"err\">" + esc(t.Error) + "</div>")
	}
	if t.URL != "" && t.URL != t.Name {
		b.WriteString("<div class=\"url\">" + esc(t.URL) + "</div>")
	}
	b.WriteString("<div class=\"why\">")
	switch {
	case t.LastRedeploy.IsZero():
		b.WriteString("never redeployed")
	case restarts(t, hook):
		b.WriteString("last redeploy <time datetime=\"" + esc(t.LastRedeploy.UTC().Format(time.RFC3339)) + "\">" + esc(ago(now, t.LastRedeploy)) + "</time>")
		if t.HookPending {
			b.WriteString(" (hook running)")
		}
	default:
		b.WriteString("last redeploy decision <time datetime=\"" + esc(t.LastRedeploy.UTC().Format(time.RFC3339)) + "\">" + esc(ago(now, t.LastRedeploy)) +
			"</time>; nothing was restarted (" + esc(notRestarted(t)) + ")")
	}
	b.WriteString("</div></details></td>\n<td class=\"sweeps\"><span class=\"tl\">")
	for i := range t.Timeline.Len() {
		b.WriteString("<i class=\"" + cellClass(t.Timeline.Cell(i)) + "\"></i>")
	}
	b.WriteString("</span></td>\n</tr>\n")
}

// ago says how long before now t was, coarsely ("12s ago", "5m ago",
// "3h ago", "2d ago").
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d ago"
}
