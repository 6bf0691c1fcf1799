package listen

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/listen/board"

	"github.com/healthctl/healthctl/internal/listen/listentest"
)

// fleetPage renders the page of a synthetic fleet of n targets after
// five sweeps, with or without an --on-redeploy hook, at path.
func fleetPage(t *testing.T, n int, hook bool, path string) (int, string) {
	t.Helper()
	now := t0.Add(5 * time.Minute)
	svc := New(Config{Interval: time.Minute, Now: func() time.Time { return now }, Hook: hook})
	for sweep := int64(1); sweep <= 5; sweep++ {
		if err := svc.Publish(listentest.Fleet(n, sweep, t0.Add(time.Duration(sweep)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	return get(t, svc.Handler(), path)
}

// kinds counts the synthetic fleet's targets by kind.
func kinds(n int) map[listentest.Kind]int {
	c := map[listentest.Kind]int{}
	for i := range n {
		c[listentest.KindOf(i)]++
	}
	return c
}

var rowRE = regexp.MustCompile(`(?s)<tr class="target [^"]*" data-target="([^"]*)".*?</tr>`)

// rows are the page's target rows, by name.
func rows(page string) map[string]string {
	m := map[string]string{}
	for _, r := range rowRE.FindAllStringSubmatch(page, -1) {
		m[r[1]] = r[0]
	}
	return m
}

// TestPageFleet: at 10, 500 and 10,000 targets the page counts every
// outcome and decision at the top; past 50 targets it lists the failing
// ones only (the held groups first), within a size bound; each held
// group's why is said once, in the box, and never on its rows.
func TestPageFleet(t *testing.T) {
	for _, tc := range []struct {
		n       int
		rows    int
		maxSize int
	}{
		{10, 10, 40 << 10},
		{500, 30, 80 << 10},
		{10000, board.PageRows, 600 << 10},
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			code, page := fleetPage(t, tc.n, false, "/")
			if code != 200 {
				t.Fatal(code)
			}
			if len(page) > tc.maxSize {
				t.Errorf("the page of %d targets is %d bytes, over %d", tc.n, len(page), tc.maxSize)
			}
			t.Logf("%d targets: %d bytes, %d rows", tc.n, len(page), len(rows(page)))
			c := kinds(tc.n)
			failing := tc.n - c[listentest.Pass]
			held := c[listentest.HeldRefused] + c[listentest.Held503]
			refused := c[listentest.HeldRefused] + c[listentest.NoRecoverGrace] + c[listentest.Redeployed]
			for _, want := range []string{
				fmt.Sprintf("<b>%d of %d failing</b>", failing, tc.n),
				fmt.Sprintf(">pass %d</a>", c[listentest.Pass]),
				fmt.Sprintf(">refused %d</a>", refused),
				fmt.Sprintf(">conn_refused %d</a>", refused),
				fmt.Sprintf(">hold-fleet %d</a>", held),
				fmt.Sprintf(">stay %d</a>", c[listentest.Pass]),
				fmt.Sprintf(">ignore-grace %d</a>", c[listentest.NoRecoverGrace]),
				`href="?reason=conn_refused&amp;show=all"`,
			} {
				if !strings.Contains(page, want) {
					t.Errorf("the counts lack %q", want)
				}
			}
			if got := len(rows(page)); got != min(tc.rows, board.PageRows) {
				t.Errorf("%d rows, want %d", got, tc.rows)
			}
			if tc.n > board.FailingOnlyOver && !strings.Contains(page, `<a href="?show=all">show all</a>`) {
				t.Error("no link to every target")
			}
			if tc.n > board.PageRows && !strings.Contains(page, `id="more"`) {
				t.Error("the rows not listed are not counted")
			}
			// Failing first, and the held groups first among them.
			first := rowRE.FindStringSubmatch(page)
			if first == nil || !strings.Contains(first[0], "hold-fleet") {
				t.Errorf("the first row is not a held one: %.200q", first)
			}
			for k, why := range map[listentest.Kind]string{
				listentest.HeldRefused: listentest.GroupWhy(listentest.HeldRefused, c[listentest.HeldRefused], tc.n),
				listentest.Held503:     listentest.GroupWhy(listentest.Held503, c[listentest.Held503], tc.n),
			} {
				if n := strings.Count(page, html.EscapeString(why)); n != 1 {
					t.Errorf("group %d's why is on the page %d times, want once (in the box)", k, n)
				}
			}
		})
	}
}

var memberRE = regexp.MustCompile(`<span class="m">([^<]*)</span>`)

var groupWhyRE = regexp.MustCompile(`<li id="group-(\d+)"><span class="why group-why">([^<]*)</span><div class="members">(\d+) held: (.*?)</div>`)

// TestPageHeldGroupsOwnWhy: two groups the fleet rule holds in one sweep
// are two entries in the box, each with its own why and its own members
// (a refused target is never told the 503 group's why), and each held row
// names its group. It fails when two held groups share a why on the page.
func TestPageHeldGroupsOwnWhy(t *testing.T) {
	_, page := fleetPage(t, 500, false, "/")
	groups := groupWhyRE.FindAllStringSubmatch(page, -1)
	if len(groups) != 2 {
		t.Fatalf("the box has %d groups, want 2:\n%s", len(groups), page[:min(len(page), 4000)])
	}
	seen := map[string]string{}
	for _, g := range groups {
		if other, dup := seen[g[2]]; dup {
			t.Errorf("groups %s and %s share the why %q", other, g[1], g[2])
		}
		seen[g[2]] = g[1]
	}
	rs := rows(page)
	for _, g := range groups {
		refusedGroup := strings.Contains(g[2], "refused")
		var members []string
		for _, m := range memberRE.FindAllStringSubmatch(g[4], -1) {
			members = append(members, m[1])
		}
		if fmt.Sprint(len(members)) != g[3] {
			t.Errorf("group %s says %s held and names %d", g[1], g[3], len(members))
		}
		for _, m := range members {
			r, ok := rs[m]
			if !ok {
				t.Errorf("group %s's member %q has no row", g[1], m)
				continue
			}
			if refusedGroup != strings.Contains(r, `data-reason="conn_refused"`) {
				t.Errorf("group %s (%q) holds %q, whose row is %.200q", g[1], g[2], m, r)
			}
			if !strings.Contains(r, "hold-fleet</b> · group "+g[1]) {
				t.Errorf("%q's row does not name group %s", m, g[1])
			}
			if strings.Contains(r, g[2]) {
				t.Errorf("%q's row repeats its group's why", m)
			}
		}
	}
}

// TestPageNoRestartClaimed: a recover: false target is marked, and
// neither it nor any target of a watch without a hook is said to have
// been restarted or to be "still booting"; with a hook a recover: true
// redeploy's time is its last redeploy. Its streak (0, inside the grace
// window) agrees with its sweeps: each is faded, not counted.
func TestPageNoRestartClaimed(t *testing.T) {
	for _, hook := range []bool{false, true} {
		_, page := fleetPage(t, 10, hook, "/")
		rs := rows(page)
		nr := rs["svc-00005"]
		if !strings.Contains(nr, `data-recover="false"`) || !strings.Contains(nr, `<span class="nr"`) {
			t.Errorf("hook %v: the recover: false row is not marked: %q", hook, nr)
		}
		if strings.Contains(nr, "still booting") || strings.Contains(nr, "last redeploy <") {
			t.Errorf("hook %v: the recover: false row claims a restart: %q", hook, nr)
		}
		if !strings.Contains(nr, "nothing was restarted (recover: false)") {
			t.Errorf("hook %v: the recover: false row does not say nothing was restarted: %q", hook, nr)
		}
		if !strings.Contains(nr, `<td class="streak">0</td>`) || strings.Count(nr, `<i class="f i"></i>`) != 5 {
			t.Errorf("hook %v: streak 0 beside sweeps that are not all faded: %q", hook, nr)
		}
		red := rs["svc-00006"]
		if hook {
			if !strings.Contains(red, "last redeploy <time") || strings.Contains(red, "not run") {
				t.Errorf("with a hook the redeploy is not said to have run: %q", red)
			}
		} else {
			if strings.Contains(page, "last redeploy <time") || strings.Contains(page, "still booting") {
				t.Error("without a hook the page claims a restart")
			}
			if !strings.Contains(red, "<b>redeploy</b> (not run: no --on-redeploy hook)") {
				t.Errorf("without a hook the redeploy row does not say it ran nothing: %q", red)
			}
		}
	}
}

// TestPageFilter: ?show=, ?reason=, ?outcome= and ?decision= choose the
// rows; a bad show= is 400; with 50 targets or fewer every one is shown.
func TestPageFilter(t *testing.T) {
	c := kinds(500)
	for _, tc := range []struct {
		path string
		n    int
	}{
		{"/", 500 - c[listentest.Pass]},
		{"/?show=failing", 500 - c[listentest.Pass]},
		{"/?show=all", 500},
		{"/?reason=conn_refused", c[listentest.HeldRefused] + c[listentest.NoRecoverGrace] + c[listentest.Redeployed]},
		{"/?outcome=tls", c[listentest.TLSPending]},
		{"/?decision=hold-fleet", c[listentest.HeldRefused] + c[listentest.Held503]},
		{"/?show=all&outcome=pass", c[listentest.Pass]},
		{"/?show=failing&outcome=pass", 0},
	} {
		code, page := fleetPage(t, 500, false, tc.path)
		if code != 200 {
			t.Errorf("%s: %d", tc.path, code)
		}
		if got := len(rows(page)); got != tc.n {
			t.Errorf("%s: %d rows, want %d", tc.path, got, tc.n)
		}
	}
	if code, body := fleetPage(t, 10, false, "/?show=some"); code != 400 || !strings.Contains(body, "show=") {
		t.Errorf("show=some: %d %q", code, body)
	}
	if _, page := fleetPage(t, 10, false, "/"); len(rows(page)) != 10 {
		t.Error("a small fleet is not shown whole")
	}
}

// TestPageRealBootStillBooting: a recover: false target whose start from
// the targets file is later than its redeploy decision did boot: its grace
// why keeps "still booting".
func TestPageRealBootStillBooting(t *testing.T) {
	now := t0.Add(5 * time.Minute)
	svc := New(Config{Interval: time.Minute, Now: func() time.Time { return now }})
	in := listentest.Fleet(10, 1, now)
	e := in.State.Targets["svc-00005"]
	e.StartedAt = e.LastRedeploy.Add(10 * time.Second)
	in.State.Targets["svc-00005"] = e
	publish(t, svc, in)
	_, page := get(t, svc.Handler(), "/")
	if r := rows(page)["svc-00005"]; !strings.Contains(r, "still booting") || !strings.Contains(r, "nothing was restarted (recover: false)") {
		t.Errorf("a real boot's row: %q", r)
	}
}

// TestHeldGroupFromTheSweep: a held target's group is the one the fleet
// rule put it in, not one found by its why's text: two groups of the same
// size whose whys read the same still keep their own members.
func TestHeldGroupFromTheSweep(t *testing.T) {
	now := t0.Add(time.Minute)
	svc := New(Config{Interval: time.Minute, Now: func() time.Time { return now }})
	in := listentest.Fleet(500, 1, t0)
	for g := range in.Sweep.HeldGroups {
		in.Sweep.HeldGroups[g].Why = "the same words for both groups"
	}
	if err := svc.Publish(in); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, svc.Handler(), "/status.json")
	st := readStatus(t, body)
	held := 0
	for i, ts := range st.Board {
		if ts.HeldGroup == 0 {
			continue
		}
		held++
		if want := map[classify.Reason]int{"conn_refused": 1, "http_status": 2}[st.lines[i].Reason]; ts.HeldGroup != want {
			t.Errorf("%s (%s) in group %d, want %d", ts.Target, st.lines[i].Reason, ts.HeldGroup, want)
		}
	}
	if held == 0 {
		t.Fatal("no held target in /status.json")
	}
}
