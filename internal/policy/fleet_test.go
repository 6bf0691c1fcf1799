package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestFleet(t *testing.T) {
	R, B, S, G, H := Redeploy, IgnoreBlip, Stay, IgnoreGrace, Hold
	rep := func(a Action, n int) []Action {
		out := make([]Action, n)
		for i := range out {
			out[i] = a
		}
		return out
	}
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
