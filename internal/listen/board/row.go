package board

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
)

// A target's row of the status page: its cells, its decision and its
// timeline.

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
