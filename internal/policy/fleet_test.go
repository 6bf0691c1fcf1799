package policy

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
)

func TestFleet(t *testing.T) {
	R, B, S, G, H := Redeploy, IgnoreBlip, Stay, IgnoreGrace, Hold
	def := DefaultFleetSettings()
	for _, tc := range []struct {
		name                 string
		in                   []Action
		s                    FleetSettings
		want                 []Action
		heldFleet, heldBudge int
		why                  string
	}{
		{name: "10 of 10 redeploy: all held", in: rep(R, 10), s: def, want: rep(HoldFleet, 10), heldFleet: 10,
			why: "10 of 10 targets failed decisively at once (hold at 50%, at least 4 probed): this looks like the prober's network, not 10 outages; no redeploys"},
		{name: "1 of 10: redeploy", in: append([]Action{R}, rep(S, 9)...), s: def, want: append([]Action{R}, rep(S, 9)...)},
		{name: "exactly half decisive (blips and grace count): held", in: []Action{R, B, G, H, S, S, S, S, B, B}, s: def,
			want: []Action{HoldFleet, B, G, H, S, S, S, S, B, B}, heldFleet: 1},
		{name: "just under half: redeploy", in: []Action{R, B, G, S, S, S, S, S, S, S}, s: def,
			want: []Action{R, B, G, S, S, S, S, S, S, S}},
		{name: "3 probed, below --hold-min: redeploys", in: rep(R, 3), s: def, want: rep(R, 3)},
		{name: "4 probed, at --hold-min: held", in: rep(R, 4), s: def, want: rep(HoldFleet, 4), heldFleet: 4},
		{name: "fraction 0 turns the rule off", in: rep(R, 10), s: FleetSettings{HoldMin: 4}, want: rep(R, 10)},
		{name: "budget: the first N in target order", in: []Action{S, R, R, S, R, S, S, S, S, S}, s: FleetSettings{HoldFraction: 0.5, HoldMin: 4, MaxRedeploys: 2},
			want: []Action{S, R, R, S, HoldBudget, S, S, S, S, S}, heldBudge: 1,
			why: "3 redeploys decided in one sweep, more than --max-redeploys 2: 1 deferred to the next sweep"},
		{name: "budget not reached", in: []Action{R, R, S, S, S}, s: FleetSettings{MaxRedeploys: 2}, want: []Action{R, R, S, S, S}},
		{name: "the fleet rule before the budget", in: rep(R, 6), s: FleetSettings{HoldFraction: 0.5, HoldMin: 4, MaxRedeploys: 1},
			want: rep(HoldFleet, 6), heldFleet: 6},
		{name: "no redeploys, nothing to hold", in: rep(B, 10), s: def, want: rep(B, 10)},
		{name: "empty sweep", in: nil, s: def, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Fleet(FleetInput{Actions: tc.in}, tc.s)
			if !slices.Equal(v.Actions, tc.want) {
				t.Errorf("actions %v, want %v", v.Actions, tc.want)
			}
			if v.HeldFleet != tc.heldFleet || v.HeldBudget != tc.heldBudge {
				t.Errorf("held fleet %d budget %d, want %d %d", v.HeldFleet, v.HeldBudget, tc.heldFleet, tc.heldBudge)
			}
			if tc.why != "" && v.Why != tc.why {
				t.Errorf("why %q\nwant %q", v.Why, tc.why)
			}
			if (v.HeldFleet+v.HeldBudget > 0) != (v.Why != "") {
				t.Errorf("why %q with %d held", v.Why, v.HeldFleet+v.HeldBudget)
			}
			if len(tc.in) > 0 && &v.Actions[0] == &tc.in[0] {
				t.Error("the input was modified in place")
			}
		})
	}
}

func TestFleetSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		s    FleetSettings
		want string
	}{
		{DefaultFleetSettings(), ""},
		{FleetSettings{HoldFraction: 1.5}, "--hold-fraction must be between 0 (off) and 1, got 1.5"},
		{FleetSettings{HoldFraction: -0.1}, "--hold-fraction"},
		{FleetSettings{HoldMin: -1}, "--hold-min must not be negative"},
		{FleetSettings{MaxRedeploys: -1}, "--max-redeploys must be 0 (no cap)"},
	} {
		err := tc.s.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
}

func TestHeldHistory(t *testing.T) {
	s := DefaultSettings()
	s.FailureThreshold = 2
	in := Input{Outcome: "refused", Reason: "conn_refused", History: History{Streak: 1}, Settings: s, Now: tableNow}
	d, h := Decide(in)
	if d.Action != Redeploy || h.Streak != 0 || !h.RecoveryPending {
		t.Fatalf("Decide: %v %+v", d.Action, h)
	}
	held := HeldHistory(in)
	if held.Streak != 2 || held.RecoveryPending || !held.StartedAt.IsZero() {
		t.Fatalf("held history %+v: want the streak counted on, no grace restart, no marker", held)
	}
}

// TestFleetOnsets: the group of a redeploy is the decisive targets whose
// current run of failures began within one sweep of its own; chronic
// failures are not in it.
func TestFleetOnsets(t *testing.T) {
	R, B, S, G := Redeploy, IgnoreBlip, Stay, IgnoreGrace
	def := DefaultFleetSettings()
	for _, tc := range []struct {
		name      string
		in        []Action
		onsets    []int64
		s         FleetSettings
		want      []Action
		heldFleet int
		why       string
	}{
		{name: "one chronic, one new outage in 4: the outage redeploys",
			in: []Action{R, R, S, S}, onsets: []int64{1, 10, 0, 0}, s: def, want: []Action{R, R, S, S}},
		{name: "chronic blip and a new outage in 4: redeploys",
			in: []Action{B, R, S, S}, onsets: []int64{3, 10, 0, 0}, s: def, want: []Action{B, R, S, S}},
		{name: "two new onsets in the same sweep, 4 probed: held",
			in: []Action{R, G, S, S}, onsets: []int64{10, 10, 0, 0}, s: def, want: []Action{HoldFleet, G, S, S}, heldFleet: 1,
			why: "2 of 4 targets failed decisively at once (hold at 50%, at least 4 probed): this looks like the prober's network, not 2 outages; no redeploys"},
		{name: "one sweep apart is together",
			in: []Action{R, B, S, S}, onsets: []int64{10, 9, 0, 0}, s: def, want: []Action{HoldFleet, B, S, S}, heldFleet: 1},
		{name: "two sweeps apart is not",
			in: []Action{R, B, S, S}, onsets: []int64{10, 8, 0, 0}, s: def, want: []Action{R, B, S, S}},
		{name: "40 failing since the same sweep stay held while they fail",
			in: rep(R, 40), onsets: repOnset(5, 40), s: def, want: rep(HoldFleet, 40), heldFleet: 40},
		{name: "half the fleet chronic, one new outage: redeploys",
			in: append(append(rep(B, 5), R), rep(S, 4)...), onsets: append(append(repOnset(1, 5), 20), repOnset(0, 4)...), s: def,
			want: append(append(rep(B, 5), R), rep(S, 4)...)},
		{name: "non-decisive targets never count, whatever their onset",
			in: []Action{R, S, IgnoreTimeout, PendingTLS}, onsets: []int64{7, 7, 7, 7}, s: def, want: []Action{R, S, IgnoreTimeout, PendingTLS}},
		{name: "held by the fleet, then the budget over the rest",
			in: []Action{R, R, R, R, R, S, S, S, S, S, S, S}, onsets: []int64{4, 4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0}, s: FleetSettings{HoldFraction: 0.4, HoldMin: 4, MaxRedeploys: 1},
			want: []Action{HoldFleet, HoldFleet, HoldFleet, HoldFleet, HoldFleet, S, S, S, S, S, S, S}, heldFleet: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Fleet(FleetInput{Actions: tc.in, Onsets: tc.onsets}, tc.s)
			if !slices.Equal(v.Actions, tc.want) {
				t.Errorf("actions %v, want %v", v.Actions, tc.want)
			}
			if v.HeldFleet != tc.heldFleet {
				t.Errorf("held fleet %d, want %d", v.HeldFleet, tc.heldFleet)
			}
			if tc.why != "" && v.Why != tc.why {
				t.Errorf("why %q\nwant %q", v.Why, tc.why)
			}
		})
	}
}

func rep(a Action, n int) []Action {
	out := make([]Action, n)
	for i := range out {
		out[i] = a
	}
	return out
}

func repOnset(o int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = o
	}
	return out
}

func TestOnset(t *testing.T) {
	for _, tc := range []struct {
		prev       int64
		prevAction Action
		a          Action
		n, want    int64
	}{
		{0, "", IgnoreBlip, 5, 5},                            // first failure: the run begins now
		{0, Stay, Redeploy, 5, 5},                            // after a pass
		{3, IgnoreBlip, Redeploy, 5, 3},                      // the run goes on
		{3, Redeploy, IgnoreGrace, 5, OnsetJudged},           // a redeploy that did not fix it: the run was judged alone
		{OnsetJudged, IgnoreGrace, Redeploy, 6, OnsetJudged}, // and stays judged while it goes on
		{OnsetJudged, IgnoreBlip, Stay, 6, 0},                // until a pass ends it
		{3, HoldFleet, Redeploy, 5, 3},                       // held, then decided again
		{3, IgnoreBlip, Stay, 5, 0},                          // a pass ends it
		{3, IgnoreBlip, IgnoreTimeout, 5, 0},                 // so does an ignored timeout
		{3, IgnoreBlip, PendingTLS, 5, 0},
		{3, IgnoreBlip, Hold, 5, 3},     // unknown: nothing learned
		{0, IgnoreBlip, Redeploy, 5, 3}, // failing before onsets were recorded: two sweeps back
		{0, HoldFleet, Redeploy, 9, 7},  // likewise
		{0, Hold, IgnoreBlip, 5, 5},     // a hold is no failure
	} {
		if got := Onset(tc.prev, tc.prevAction, tc.a, tc.n); got != tc.want {
			t.Errorf("Onset(%d, %q, %q, %d) = %d, want %d", tc.prev, tc.prevAction, tc.a, tc.n, got, tc.want)
		}
	}
}

// TestFleetSmallFleet runs the fleet rule over sweeps the way watch does
// (Decide, Onset, Fleet): 4 targets, one failing chronically (recover:
// false makes no difference to the policy), then a real outage. With
// --failure-threshold 3 the outage is redeployed on the sweep its streak
// reaches 3, not held for ever.
func TestFleetSmallFleet(t *testing.T) {
	s := DefaultSettings()
	s.FailureThreshold = 3
	type tgt struct {
		h       History
		onset   int64
		last    Action
		failing func(sweep int) bool
	}
	targets := []*tgt{
		{failing: func(int) bool { return true }},      // chronic
		{failing: func(n int) bool { return n >= 10 }}, // the outage, from sweep 10
		{failing: func(int) bool { return false }},
		{failing: func(int) bool { return false }},
	}
	var outage []Action
	for n := 1; n <= 14; n++ {
		now := tableNow.Add(time.Duration(n) * time.Minute)
		actions := make([]Action, len(targets))
		onsets := make([]int64, len(targets))
		inputs := make([]Input, len(targets))
		hist := make([]History, len(targets))
		for i, tg := range targets {
			in := Input{Outcome: "pass", History: tg.h, Settings: s, Now: now}
			if tg.failing(n) {
				in.Outcome, in.Reason = "refused", "conn_refused"
			}
			d, h := Decide(in)
			inputs[i], hist[i] = in, h
			actions[i] = d.Action
			onsets[i] = Onset(tg.onset, tg.last, d.Action, int64(n))
		}
		v := Fleet(FleetInput{Actions: actions, Onsets: onsets}, DefaultFleetSettings())
		for i, tg := range targets {
			tg.last, tg.onset, tg.h = v.Actions[i], onsets[i], hist[i]
			if v.Actions[i] == HoldFleet || v.Actions[i] == HoldBudget {
				tg.h = HeldHistory(inputs[i])
			}
		}
		if n >= 10 {
			outage = append(outage, v.Actions[1])
		}
		if v.HeldFleet > 0 {
			t.Errorf("sweep %d: held %v: %s", n, v.Actions, v.Why)
		}
	}
	want := []Action{IgnoreBlip, IgnoreBlip, Redeploy, IgnoreGrace, IgnoreBlip}
	if !slices.Equal(outage, want) {
		t.Errorf("the outage's decisions from sweep 10: %v, want %v", outage, want)
	}
}

// A target redeployed alone (the fleet rule let it through) and still
// failing is judged: it never makes a correlated onset with an outage that
// starts one sweep later, which a 4-target fleet would otherwise hold for
// ever (2 of 4 within one sweep of each other).
func TestFleetJudgedOnsetHoldsNothing(t *testing.T) {
	s := DefaultSettings()
	s.Grace, s.FailureThreshold = 0, 1
	failing := []func(n int) bool{
		func(int) bool { return true },     // redeployed alone in sweep 1, failing on
		func(n int) bool { return n >= 2 }, // a new outage from sweep 2
		func(int) bool { return false },
		func(int) bool { return false },
	}
	hist := make([]History, len(failing))
	onset := make([]int64, len(failing))
	last := make([]Action, len(failing))
	for n := 1; n <= 5; n++ {
		now := tableNow.Add(time.Duration(n) * time.Minute)
		actions := make([]Action, len(failing))
		onsets := make([]int64, len(failing))
		next := make([]History, len(failing))
		for i, f := range failing {
			in := Input{Outcome: "pass", History: hist[i], Settings: s, Now: now}
			if f(n) {
				in.Outcome, in.Reason = "refused", "conn_refused"
			}
			d, h := Decide(in)
			actions[i], next[i] = d.Action, h
			onsets[i] = Onset(onset[i], last[i], d.Action, int64(n))
		}
		v := Fleet(FleetInput{Actions: actions, Onsets: onsets}, DefaultFleetSettings())
		if v.HeldFleet > 0 {
			t.Fatalf("sweep %d: %v held (onsets %v): %s", n, v.Actions, onsets, v.Why)
		}
		if n >= 2 && v.Actions[1] != Redeploy {
			t.Errorf("sweep %d: the new outage is %s, want redeploy", n, v.Actions[1])
		}
		copy(hist, next)
		copy(onset, onsets)
		copy(last, v.Actions)
	}
	if onset[0] != OnsetJudged {
		t.Errorf("the target redeployed alone has onset %d, want OnsetJudged", onset[0])
	}
}

// TestFleetWhyNamesTheAnswers: the why of a hold says what the held group
// answered; only a group none of which answered HTTP reads as the
// prober's network.
func TestFleetWhyNamesTheAnswers(t *testing.T) {
	R, S := Redeploy, Stay
	http503 := Answer{Outcome: classify.Unreachable, Reason: classify.HTTPStatus, HTTPStatus: 503}
	refused := Answer{Outcome: classify.Refused, Reason: classify.ConnRefused}
	hung := Answer{Outcome: classify.Timeout, Reason: classify.HeadersTimeout}
	pass := Answer{Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200}
	head := "4 of 5 targets failed decisively at once (hold at 50%, at least 4 probed)"
	for _, c := range []struct {
		name    string
		answers []Answer
		want    string
	}{
		{"all answered HTTP", []Answer{http503, http503, http503, http503, pass},
			head + ", all answering HTTP (4 HTTP 503): the prober reaches them, so a cause they share (a dependency, a release), not 4 outages; no redeploys"},
		{"none answered", []Answer{refused, refused, hung, refused, pass},
			head + ", none with an HTTP answer (3 refused conn_refused, 1 timeout headers_timeout): this looks like the prober's network, not 4 outages; no redeploys"},
		{"some answered", []Answer{http503, refused, {Outcome: classify.Unreachable, Reason: classify.HTTPStatus, HTTPStatus: 500}, http503, pass},
			head + ", 3 of them answering HTTP (2 HTTP 503, 1 HTTP 500, 1 refused conn_refused): the prober reaches those, so a cause they share, not 4 outages; no redeploys"},
		{"answers not known", nil,
			head + ": this looks like the prober's network, not 4 outages; no redeploys"},
	} {
		v := Fleet(FleetInput{Actions: []Action{R, R, R, R, S}, Answers: c.answers}, DefaultFleetSettings())
		if v.FleetWhy != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, v.FleetWhy, c.want)
		}
	}
}

// BenchmarkFleetAllFailing is the fleet rule over a sweep of 100,000
// targets that all failed at once (the prober's network down): every one a
// redeploy, onsets over three sweeps. Counting each redeploy's group over
// the whole sweep made this ~20 s; it is counted once by onset now.
func BenchmarkFleetAllFailing(b *testing.B) {
	const n = 100000
	in := FleetInput{Actions: make([]Action, n), Onsets: make([]int64, n), Answers: make([]Answer, n)}
	for i := range n {
		in.Actions[i], in.Onsets[i] = Redeploy, int64(5+i%3)
		in.Answers[i] = Answer{Outcome: "refused", Reason: "conn_refused"}
	}
	for b.Loop() {
		if v := Fleet(in, DefaultFleetSettings()); v.HeldFleet != n {
			b.Fatalf("held %d of %d", v.HeldFleet, n)
		}
	}
}

// TestFleetHeldGroupsEachOwnWhy: when the fleet rule holds two groups in
// one sweep — one refused since sweep 3, one answering 503 since sweep 10 —
// each held target carries its own group's why, never the other's, and
// the verdict counts each group.
func TestFleetHeldGroupsEachOwnWhy(t *testing.T) {
	R, S := Redeploy, Stay
	http503 := Answer{Outcome: classify.Unreachable, Reason: classify.HTTPStatus, HTTPStatus: 503}
	refused := Answer{Outcome: classify.Refused, Reason: classify.ConnRefused}
	pass := Answer{Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200}
	in := FleetInput{
		Actions: []Action{R, R, R, R, R, R, R, R, S, S},
		Onsets:  []int64{3, 10, 3, 10, 3, 10, 3, 10, 0, 0},
		Answers: []Answer{refused, http503, refused, http503, refused, http503, refused, http503, pass, pass},
	}
	v := Fleet(in, FleetSettings{HoldFraction: 0.4, HoldMin: 4})
	if v.HeldFleet != 8 || len(v.Groups) != 2 {
		t.Fatalf("held %d in %d groups (%+v), want 8 in 2", v.HeldFleet, len(v.Groups), v.Groups)
	}
	head := "4 of 10 targets failed decisively at once (hold at 40%, at least 4 probed)"
	refusedWhy := head + ", none with an HTTP answer (4 refused conn_refused): this looks like the prober's network, not 4 outages; no redeploys"
	httpWhy := head + ", all answering HTTP (4 HTTP 503): the prober reaches them, so a cause they share (a dependency, a release), not 4 outages; no redeploys"
	want := []FleetGroup{
		{FirstOnset: 3, LastOnset: 3, Targets: 4, Held: 4, Why: refusedWhy},
		{FirstOnset: 10, LastOnset: 10, Targets: 4, Held: 4, Why: httpWhy},
	}
	if !slices.Equal(v.Groups, want) {
		t.Errorf("groups\n got %+v\nwant %+v", v.Groups, want)
	}
	for i, a := range in.Answers[:8] {
		why := v.WhyAt(i)
		own, other := refusedWhy, httpWhy
		if a.HTTPStatus != 0 {
			own, other = httpWhy, refusedWhy
		}
		if why != own || why == other {
			t.Errorf("target %d (%s %s %d): why %q, want its own group's %q", i, a.Outcome, a.Reason, a.HTTPStatus, why, own)
		}
	}
	if v.WhyAt(8) != "" || v.Group[8] != -1 {
		t.Errorf("a passing target has why %q group %d", v.WhyAt(8), v.Group[8])
	}
	if v.FleetWhy != refusedWhy+"; "+httpWhy || v.Why != v.FleetWhy {
		t.Errorf("the sweep's why %q: want both groups'", v.Why)
	}
}

// TestFleetGroupsJoinWhereTheyShareMembers: held onsets whose groups share
// a member are one group; two sweeps apart with nobody between, two.
func TestFleetGroupsJoinWhereTheyShareMembers(t *testing.T) {
	R, B, S := Redeploy, IgnoreBlip, Stay
	s := FleetSettings{HoldFraction: 0.3, HoldMin: 4}
	for _, tc := range []struct {
		name   string
		in     []Action
		onsets []int64
		sizes  []int
	}{
		{"one sweep apart: one group", []Action{R, R, R, R, S, S}, []int64{5, 5, 6, 6, 0, 0}, []int{4}},
		{"two apart, a member between: one group", []Action{R, R, B, R, R, S, S, S, S, S}, []int64{5, 5, 6, 7, 7, 0, 0, 0, 0, 0}, []int{5}},
		{"two apart, nobody between: two groups", []Action{R, R, R, R, S, S}, []int64{5, 5, 7, 7, 0, 0}, []int{2, 2}},
		{"far apart: two groups", []Action{R, R, R, R, S, S}, []int64{20, 20, 2, 2, 0, 0}, []int{2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Fleet(FleetInput{Actions: tc.in, Onsets: tc.onsets}, s)
			var sizes []int
			held := 0
			for _, g := range v.Groups {
				sizes = append(sizes, g.Targets)
				held += g.Held
			}
			if !slices.Equal(sizes, tc.sizes) || held != v.HeldFleet {
				t.Errorf("groups %+v (held %d of %d), want sizes %v", v.Groups, held, v.HeldFleet, tc.sizes)
			}
		})
	}
}
