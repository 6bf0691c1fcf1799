package listen

import (
	"bytes"
	"html"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/healthctl/healthctl/internal/policy"
)

// The status page is written by hand with html.EscapeString, not with
// html/template: html/template runs on text/template's execution, which
// makes the linker keep every exported method (.ci/run's start-up guard
// refuses the binary that links it). Every text from a target, a server or
// the targets file went through output.Untrusted (control characters as
// \x1b text) when the board was made, and is HTML-escaped here, in element
// text and attribute values alike.

// PageRows is how many targets the page lists; the rest (passing targets,
// since failing ones come first) are counted, and are in /status.json.
const PageRows = 1000

// esc is html.EscapeString (<, >, &, ' and ").
func esc(s string) string { return html.EscapeString(s) }

func (s *Service) servePage(w http.ResponseWriter, _ *http.Request) {
	var b bytes.Buffer
	writePage(&b, s.Status(), s.cfg.Now(), s.cfg.Refresh)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// Nothing the page needs comes from anywhere else.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; frame-ancestors 'none'")
	w.Write(b.Bytes())
}

const pageStyle = `
body{font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:12px;background:#fafafa;color:#1b1b1b}
h1{font-size:20px;margin:0 0 4px}
.summary{margin:0 0 12px;color:#555}
.hold{border:2px solid #b35c00;background:#fff1de;padding:8px 12px;margin:0 0 12px;border-radius:6px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid #e2e2e2}
th{font-size:12px;text-transform:uppercase;color:#666}
tr.failing td:first-child{border-left:4px solid #c62828}
tr.passing td:first-child{border-left:4px solid #2e7d32}
tr.waiting td:first-child{border-left:4px solid #9e9e9e}
.name{font-weight:600;word-break:break-all}
.url,.why,.err{font-size:13px;color:#555;overflow-wrap:anywhere}
.err{font-family:ui-monospace,monospace;color:#8e1b1b}
.badge{display:inline-block;padding:0 6px;border-radius:4px;color:#fff;font-weight:600}
code{font-size:13px}
.o-pass{background:#2e7d32}.o-refused{background:#c62828}.o-unreachable{background:#ad1457}.o-dns{background:#6a1b9a}
.o-tls{background:#e65100}.o-timeout{background:#f9a825;color:#1b1b1b}.o-unknown{background:#616161}.o-none{background:#bdbdbd}
.tl{display:flex;gap:2px;flex-wrap:wrap;max-width:300px}
.c{display:inline-block;width:8px;height:16px;border-radius:2px}
.c.r{outline:2px solid #000;outline-offset:-1px}
.more{color:#555;margin-top:8px}
@media (max-width:700px){
 table,thead,tbody,tr,td{display:block}
 thead{display:none}
 tr{margin:0 0 10px;border:1px solid #e2e2e2;border-radius:6px;background:#fff}
 td{border:0;padding:3px 8px}
 td[data-label]::before{content:attr(data-label) ": ";color:#666;font-size:12px}
 tr.failing td:first-child,tr.passing td:first-child,tr.waiting td:first-child{border-left:0}
 tr.failing{border-left:4px solid #c62828}tr.passing{border-left:4px solid #2e7d32}
}
`

// writePage writes the status page of st (nil: no sweep yet) at now.
func writePage(b *bytes.Buffer, st *Status, now time.Time, refresh int) {
	var rows []*TargetStatus
	failing := 0
	if st != nil {
		rows = make([]*TargetStatus, len(st.Targets))
		for i := range st.Targets {
			rows[i] = &st.Targets[i]
			if rows[i].Failing() {
				failing++
			}
		}
		// Failing first, the longest-failing first; the rest in the
		// targets' order.
		slices.SortStableFunc(rows, func(a, c *TargetStatus) int {
			switch fa, fc := a.Failing(), c.Failing(); {
			case fa && !fc:
				return -1
			case fc && !fa:
				return 1
			case fa && fc:
				return a.Since.Compare(c.Since)
			}
			return 0
		})
	}
	title := "healthctl watch"
	if st != nil {
		title = strconv.Itoa(failing) + " of " + strconv.Itoa(len(rows)) + " failing · healthctl watch"
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
	b.WriteString("<p class=\"summary\" id=\"summary\">Sweep " + strconv.FormatInt(sw.N, 10) + " at " +
		esc(sw.Started.UTC().Format("2006-01-02 15:04:05 UTC")) + " (" + esc(ago(now, sw.Started)) + ") · " +
		strconv.Itoa(len(rows)) + " targets · " + strconv.Itoa(failing) + " failing · shard " + esc(st.Shard) +
		" · <a href=\"status.json\">status.json</a> · <a href=\"metrics\">metrics</a></p>\n")
	if f := st.Fleet; f.Held {
		b.WriteString("<div class=\"hold\" id=\"hold\" role=\"alert\"><b>Redeploys held by the fleet rule</b> (")
		b.WriteString(strconv.Itoa(f.HeldFleet) + " hold-fleet, " + strconv.Itoa(f.HeldBudget) + " hold-budget): ")
		b.WriteString(esc(f.HoldWhy) + "</div>\n")
	}
	b.WriteString("<table>\n<thead><tr><th>target</th><th>outcome · reason</th><th>since</th><th>streak</th><th>decision</th><th>last redeploy</th><th>last " +
		strconv.Itoa(TimelineLen) + " sweeps</th></tr></thead>\n<tbody>\n")
	shown := min(len(rows), PageRows)
	for _, t := range rows[:shown] {
		writeRow(b, t, now)
	}
	b.WriteString("</tbody></table>\n")
	if shown < len(rows) {
		b.WriteString("<p class=\"more\">" + strconv.Itoa(len(rows)-shown) + " more targets (passing, or listed later) are in <a href=\"status.json\">status.json</a>.</p>\n")
	}
	b.WriteString("</body></html>\n")
}

func writeRow(b *bytes.Buffer, t *TargetStatus, now time.Time) {
	class := "passing"
	switch {
	case t.Outcome == "":
		class = "waiting"
	case t.Failing():
		class = "failing"
	}
	b.WriteString("<tr class=\"target " + class + "\" data-target=\"" + esc(t.Name) + "\" data-outcome=\"" + esc(string(t.Outcome)) +
		"\" data-reason=\"" + esc(string(t.Reason)) + "\">\n")
	b.WriteString("<td data-label=\"target\"><span class=\"name\">" + esc(t.Name) + "</span>")
	if t.URL != "" && t.URL != t.Name {
		b.WriteString("<div class=\"url\">" + esc(t.URL) + "</div>")
	}
	b.WriteString("</td>\n")
	if t.Outcome == "" {
		b.WriteString("<td data-label=\"outcome\" class=\"outcome\"><span class=\"badge o-none\">not probed yet</span></td>\n<td></td><td></td><td></td><td></td><td></td></tr>\n")
		return
	}
	b.WriteString("<td data-label=\"outcome\" class=\"outcome\"><span class=\"badge o-" + esc(string(t.Outcome)) + "\">" + esc(string(t.Outcome)) +
		"</span> <code class=\"reason\">" + esc(string(t.Reason)) + "</code>")
	if t.HTTPStatus != 0 {
		b.WriteString(" <code>HTTP " + strconv.Itoa(t.HTTPStatus) + "</code>")
	}
	if t.Error != "" {
		b.WriteString("<div class=\"err\">" + esc(t.Error) + "</div>")
	}
	b.WriteString("</td>\n")
	b.WriteString("<td data-label=\"since\"><time datetime=\"" + esc(t.Since.UTC().Format(time.RFC3339)) + "\" title=\"" +
		esc(t.Since.UTC().Format("2006-01-02 15:04:05 UTC")) + "\">" + esc(ago(now, t.Since)) + "</time></td>\n")
	b.WriteString("<td data-label=\"streak\">" + strconv.Itoa(t.Streak) + "</td>\n")
	b.WriteString("<td data-label=\"decision\" class=\"decision\">")
	if d := t.Decision; d != nil {
		b.WriteString("<b>" + esc(string(d.Action)) + "</b>")
		if !t.Recover && d.Action == policy.Redeploy {
			b.WriteString(" (recover: false)")
		}
		b.WriteString("<div class=\"why\">" + esc(d.Why) + "</div>")
	}
	b.WriteString("</td>\n<td data-label=\"last redeploy\">")
	if t.LastRedeploy.IsZero() {
		b.WriteString("never")
	} else {
		b.WriteString("<time datetime=\"" + esc(t.LastRedeploy.UTC().Format(time.RFC3339)) + "\">" + esc(ago(now, t.LastRedeploy)) + "</time>")
		if t.HookPending {
			b.WriteString(" (hook running)")
		}
	}
	b.WriteString("</td>\n<td data-label=\"sweeps\"><span class=\"tl\" aria-label=\"last sweeps, oldest first\">")
	for i := range t.Timeline.Len() {
		c := t.Timeline.Cell(i)
		o := string(c.Outcome)
		if o == "" {
			o = "none"
		}
		cls := "c o-" + esc(o)
		if c.Action == policy.Redeploy {
			cls += " r"
		}
		b.WriteString("<span class=\"" + cls + "\" title=\"" + esc(o+" / "+string(c.Action)) + "\"></span>")
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
