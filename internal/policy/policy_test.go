package policy_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// ago is a start time d before now.
func ago(d time.Duration) time.Time { return now.Add(-d) }

func settings(mod func(*policy.Settings)) policy.Settings {
	s := policy.DefaultSettings()
	if mod != nil {
		mod(&s)
	}
	return s
}

func reasonOf(o classify.Outcome) classify.Reason {
	switch o {
	case classify.Pass:
		return classify.OK
	case classify.TLS:
		return classify.TLSUnknownAuthority
	case classify.Timeout:
		return classify.HeadersTimeout
	case classify.Refused:
		return classify.ConnRefused
	case classify.DNS:
		return classify.DNSNXDomain
	}
	return classify.HTTPStatus
}

func TestDefaultSettings(t *testing.T) {
	want := policy.Settings{Grace: 2 * time.Minute, FailureThreshold: 1}
	if got := policy.DefaultSettings(); got != want {
		t.Fatalf("DefaultSettings() = %+v, want %+v", got, want)
	}
	if err := policy.DefaultSettings().Validate(); err != nil {
		t.Fatalf("DefaultSettings().Validate() = %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*policy.Settings)
		want string // "" = valid
	}{
		{"defaults", nil, ""},
		{"zero grace", func(s *policy.Settings) { s.Grace = 0 }, ""},
		{"all set", func(s *policy.Settings) {
			s.Grace, s.FailureThreshold, s.EscalateTimeoutsAfter, s.TLSPendingMax = time.Hour, 5, 3, time.Hour
		}, ""},
		{"negative grace", func(s *policy.Settings) { s.Grace = -time.Second }, "--grace must not be negative, got -1s"},
		{"zero threshold", func(s *policy.Settings) { s.FailureThreshold = 0 }, "--failure-threshold must be at least 1, got 0"},
		{"negative threshold", func(s *policy.Settings) { s.FailureThreshold = -2 }, "--failure-threshold must be at least 1, got -2"},
		{"negative escalation", func(s *policy.Settings) { s.EscalateTimeoutsAfter = -1 }, "--escalate-timeouts-after must be 0 (never) or at least 1, got -1"},
		{"negative tls pending", func(s *policy.Settings) { s.TLSPendingMax = -time.Minute }, "--tls-pending-max must not be negative (0 waits forever), got -1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := settings(tt.mod).Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestDecide covers every rule of Decide, every setting and the boundaries,
// one probe at a time.
func TestDecide(t *testing.T) {
	tests := []struct {
		name     string
		outcome  classify.Outcome
		history  policy.History
		settings func(*policy.Settings)
		want     policy.Action
		cleared  bool
		after    policy.History // the history to carry on
		why      []string       // substrings of the why
	}{
		// Rule 1: pass.
		{
			name: "pass stays", outcome: classify.Pass,
			history: policy.History{StartedAt: ago(time.Hour)},
			want:    policy.Stay,
			after:   policy.History{StartedAt: ago(time.Hour)},
			why:     []string{"pass (ok)", "stay running"},
		},
		{
			name: "pass resets every streak but keeps the start", outcome: classify.Pass,
			history:  policy.History{StartedAt: ago(time.Hour), Streak: 2, TimeoutStreak: 3, TLSFailingSince: ago(time.Minute)},
			settings: func(s *policy.Settings) { s.FailureThreshold = 5 },
			want:     policy.Stay,
			after:    policy.History{StartedAt: ago(time.Hour)},
		},
		{
			name: "first pass after a redeploy clears the marker", outcome: classify.Pass,
			history: policy.History{StartedAt: ago(time.Minute), RecoveryPending: true},
			want:    policy.Stay, cleared: true,
			after: policy.History{StartedAt: ago(time.Minute)},
			why:   []string{"recovered", "clear the recovery marker"},
		},
		{
			name: "pass inside grace still stays", outcome: classify.Pass,
			history: policy.History{StartedAt: ago(time.Second)},
			want:    policy.Stay,
			after:   policy.History{StartedAt: ago(time.Second)},
		},

		{
			name: "a streak past the threshold (held by the fleet rule) says so, never 3 of 1", outcome: classify.Refused,
			history: policy.History{StartedAt: ago(time.Hour), Streak: 2},
			want:    policy.Redeploy,
			after:   policy.History{StartedAt: now, RecoveryPending: true},
			why:     []string{"3 decisive failures in a row (threshold 1): enqueue a redeploy"},
		},

		// Rule 2: tls.
		{
			name: "tls is pending and starts the tls clock", outcome: classify.TLS,
			history:  policy.History{StartedAt: ago(time.Hour), Streak: 1},
			settings: func(s *policy.Settings) { s.FailureThreshold = 2 },
			want:     policy.PendingTLS,
			after:    policy.History{StartedAt: ago(time.Hour), Streak: 1, TLSFailingSince: now},
			why:      []string{"tls (tls_unknown_authority)", "warming", "pending TLS"},
		},
		{
			name: "tls keeps the clock of an earlier tls failure", outcome: classify.TLS,
			history: policy.History{TLSFailingSince: ago(24 * time.Hour)},
			want:    policy.PendingTLS,
			after:   policy.History{TLSFailingSince: ago(24 * time.Hour)},
		},
		{
			name: "tls pending forever by default, even a day past grace", outcome: classify.TLS,
			history: policy.History{StartedAt: ago(48 * time.Hour), TLSFailingSince: ago(24 * time.Hour)},
			want:    policy.PendingTLS,
			after:   policy.History{StartedAt: ago(48 * time.Hour), TLSFailingSince: ago(24 * time.Hour)},
		},
		{
			name: "tls resets the timeout streak", outcome: classify.TLS,
			history: policy.History{TimeoutStreak: 4},
			want:    policy.PendingTLS,
			after:   policy.History{TLSFailingSince: now},
		},
		{
			name: "tls-pending-max: failing exactly the max is still pending", outcome: classify.TLS,
			history:  policy.History{TLSFailingSince: ago(10 * time.Minute)},
			settings: func(s *policy.Settings) { s.TLSPendingMax = 10 * time.Minute },
			want:     policy.PendingTLS,
			after:    policy.History{TLSFailingSince: ago(10 * time.Minute)},
			why:      []string{"failing for 10m0s", "within the 10m0s TLS pending limit"},
		},
		{
			name: "tls-pending-max: first failure is pending", outcome: classify.TLS,
			settings: func(s *policy.Settings) { s.TLSPendingMax = time.Nanosecond },
			want:     policy.PendingTLS,
			after:    policy.History{TLSFailingSince: now},
			why:      []string{"the first TLS failure"},
		},
		{
			name: "tls-pending-max exceeded past grace redeploys and restarts the tls clock", outcome: classify.TLS,
			history:  policy.History{StartedAt: ago(time.Hour), TLSFailingSince: ago(10*time.Minute + time.Second)},
			settings: func(s *policy.Settings) { s.TLSPendingMax = 10 * time.Minute },
			want:     policy.Redeploy,
			after:    policy.History{StartedAt: now, TLSFailingSince: now, RecoveryPending: true},
			why:      []string{"failing for 10m1s", "longer than the 10m0s TLS pending limit", "1 of 1", "enqueue a redeploy"},
		},
		{
			name: "tls-pending-max exceeded inside grace is ignored", outcome: classify.TLS,
			history:  policy.History{StartedAt: ago(time.Minute), TLSFailingSince: ago(time.Hour)},
			settings: func(s *policy.Settings) { s.TLSPendingMax = 10 * time.Minute },
			want:     policy.IgnoreGrace,
			after:    policy.History{StartedAt: ago(time.Minute), TLSFailingSince: ago(time.Hour)},
		},
		{
			name: "tls-pending-max exceeded below the threshold is a blip", outcome: classify.TLS,
			history: policy.History{TLSFailingSince: ago(time.Hour)},
			settings: func(s *policy.Settings) {
				s.TLSPendingMax, s.FailureThreshold = 10*time.Minute, 2
			},
			want:  policy.IgnoreBlip,
			after: policy.History{Streak: 1, TLSFailingSince: ago(time.Hour)},
		},

		// Rule 3: timeout.
		{
			name: "timeout is ignored and counted", outcome: classify.Timeout,
			history:  policy.History{StartedAt: ago(time.Hour), Streak: 1, TimeoutStreak: 6},
			settings: func(s *policy.Settings) { s.FailureThreshold = 2 },
			want:     policy.IgnoreTimeout,
			after:    policy.History{StartedAt: ago(time.Hour), Streak: 1, TimeoutStreak: 7},
			why:      []string{"timeout (headers_timeout)", "the 7th in a row", "ignore"},
		},
		{
			name: "timeout clears the tls clock", outcome: classify.Timeout,
			history: policy.History{TLSFailingSince: ago(time.Hour)},
			want:    policy.IgnoreTimeout,
			after:   policy.History{TimeoutStreak: 1},
		},
		{
			name: "escalate-timeouts-after 3: the 2nd timeout is ignored", outcome: classify.Timeout,
			history:  policy.History{TimeoutStreak: 1},
			settings: func(s *policy.Settings) { s.EscalateTimeoutsAfter = 3 },
			want:     policy.IgnoreTimeout,
			after:    policy.History{TimeoutStreak: 2},
			why:      []string{"the 2nd in a row", "decisive from the 3rd"},
		},
		{
			name: "escalate-timeouts-after 3: the 3rd timeout redeploys past grace", outcome: classify.Timeout,
			history:  policy.History{StartedAt: ago(time.Hour), TimeoutStreak: 2},
			settings: func(s *policy.Settings) { s.EscalateTimeoutsAfter = 3 },
			want:     policy.Redeploy,
			after:    policy.History{StartedAt: now, RecoveryPending: true},
			why:      []string{"the 3rd in a row, decisive from the 3rd", "1 of 1 decisive failure in a row", "enqueue a redeploy"},
		},
		{
			name: "escalate-timeouts-after 3: later timeouts stay decisive", outcome: classify.Timeout,
			history: policy.History{StartedAt: ago(time.Hour), TimeoutStreak: 9, Streak: 1},
			settings: func(s *policy.Settings) {
				s.EscalateTimeoutsAfter, s.FailureThreshold = 3, 3
			},
			want:  policy.IgnoreBlip,
			after: policy.History{StartedAt: ago(time.Hour), TimeoutStreak: 10, Streak: 2},
		},
		{
			name: "escalate-timeouts-after 1: the first timeout is decisive", outcome: classify.Timeout,
			settings: func(s *policy.Settings) { s.EscalateTimeoutsAfter = 1 },
			want:     policy.Redeploy,
			after:    policy.History{StartedAt: now, RecoveryPending: true},
		},
		{
			name: "escalated timeout inside grace is ignored", outcome: classify.Timeout,
			history:  policy.History{StartedAt: ago(time.Minute), TimeoutStreak: 5},
			settings: func(s *policy.Settings) { s.EscalateTimeoutsAfter = 3 },
			want:     policy.IgnoreGrace,
			after:    policy.History{StartedAt: ago(time.Minute), TimeoutStreak: 6},
		},

		// Rule 4: decisive inside grace.
		{
			name: "refused inside grace is ignored", outcome: classify.Refused,
			history: policy.History{StartedAt: ago(30 * time.Second)},
			want:    policy.IgnoreGrace,
			after:   policy.History{StartedAt: ago(30 * time.Second)},
			why:     []string{"refused (conn_refused)", "30s old", "inside the 2m0s grace window", "still booting"},
		},
		{
			name: "dns inside grace neither adds to nor resets the streak", outcome: classify.DNS,
			history:  policy.History{StartedAt: ago(time.Minute), Streak: 1, TimeoutStreak: 2},
			settings: func(s *policy.Settings) { s.FailureThreshold = 2 },
			want:     policy.IgnoreGrace,
			after:    policy.History{StartedAt: ago(time.Minute), Streak: 1},
		},
		{
			name: "one nanosecond before the end of grace is inside", outcome: classify.Unreachable,
			history: policy.History{StartedAt: ago(2*time.Minute - time.Nanosecond)},
			want:    policy.IgnoreGrace,
			after:   policy.History{StartedAt: ago(2*time.Minute - time.Nanosecond)},
		},
		{
			name: "a start in the future is inside grace", outcome: classify.Refused,
			history: policy.History{StartedAt: now.Add(time.Hour)},
			want:    policy.IgnoreGrace,
			after:   policy.History{StartedAt: now.Add(time.Hour)},
		},
		{
			name: "custom grace", outcome: classify.Refused,
			history:  policy.History{StartedAt: ago(4 * time.Minute)},
			settings: func(s *policy.Settings) { s.Grace = 5 * time.Minute },
			want:     policy.IgnoreGrace,
			after:    policy.History{StartedAt: ago(4 * time.Minute)},
			why:      []string{"4m0s old", "5m0s grace window"},
		},

		// Rules 5 and 6: decisive past grace.
		{
			name: "age exactly at grace is past grace", outcome: classify.Refused,
			history: policy.History{StartedAt: ago(2 * time.Minute)},
			want:    policy.Redeploy,
			after:   policy.History{StartedAt: now, RecoveryPending: true},
			why:     []string{"past the 2m0s grace window (age 2m0s)"},
		},
		{
			name: "redeploy explains itself", outcome: classify.Refused,
			history: policy.History{StartedAt: ago(10 * time.Minute)},
			want:    policy.Redeploy,
			after:   policy.History{StartedAt: now, RecoveryPending: true},
			why:     []string{"refused (conn_refused), past the 2m0s grace window (age 10m0s), 1 of 1 decisive failure in a row: enqueue a redeploy"},
		},
		{
			name: "no recorded start is past grace", outcome: classify.DNS,
			want:  policy.Redeploy,
			after: policy.History{StartedAt: now, RecoveryPending: true},
			why:   []string{"dns (dns_nxdomain)", "no recorded start time"},
		},
		{
			name: "zero grace: a decisive failure counts at once", outcome: classify.Unreachable,
			history:  policy.History{StartedAt: now},
			settings: func(s *policy.Settings) { s.Grace = 0 },
			want:     policy.Redeploy,
			after:    policy.History{StartedAt: now, RecoveryPending: true},
		},
		{
			name: "below the threshold is a blip", outcome: classify.Refused,
			history:  policy.History{StartedAt: ago(time.Hour)},
			settings: func(s *policy.Settings) { s.FailureThreshold = 3 },
			want:     policy.IgnoreBlip,
			after:    policy.History{StartedAt: ago(time.Hour), Streak: 1},
			why:      []string{"1 of 3 decisive failures in a row", "not an outage"},
		},
		{
			name: "threshold 3: the 2nd failure is still a blip", outcome: classify.Unreachable,
			history:  policy.History{StartedAt: ago(time.Hour), Streak: 1},
			settings: func(s *policy.Settings) { s.FailureThreshold = 3 },
			want:     policy.IgnoreBlip,
			after:    policy.History{StartedAt: ago(time.Hour), Streak: 2},
			why:      []string{"2 of 3"},
		},
		{
			name: "threshold 3: the 3rd failure redeploys and restarts grace", outcome: classify.DNS,
			history:  policy.History{StartedAt: ago(time.Hour), Streak: 2, TimeoutStreak: 0},
			settings: func(s *policy.Settings) { s.FailureThreshold = 3 },
			want:     policy.Redeploy,
			after:    policy.History{StartedAt: now, RecoveryPending: true},
			why:      []string{"3 of 3 decisive failures in a row"},
		},
		{
			name: "a streak already above the threshold redeploys", outcome: classify.Refused,
			history:  policy.History{Streak: 7},
			settings: func(s *policy.Settings) { s.FailureThreshold = 2 },
			want:     policy.Redeploy,
			after:    policy.History{StartedAt: now, RecoveryPending: true},
		},
		{
			name: "a redeploy while one is pending keeps the marker", outcome: classify.Refused,
			history: policy.History{StartedAt: ago(time.Hour), RecoveryPending: true},
			want:    policy.Redeploy,
			after:   policy.History{StartedAt: now, RecoveryPending: true},
		},
		{
			name: "a zero threshold behaves as 1", outcome: classify.Refused,
			settings: func(s *policy.Settings) { s.FailureThreshold = 0 },
			want:     policy.Redeploy,
			after:    policy.History{StartedAt: now, RecoveryPending: true},
		},
		{
			name: "an outcome outside the set is the unreachable catch-all", outcome: classify.Outcome("bogus"),
			history: policy.History{StartedAt: ago(time.Minute)},
			want:    policy.IgnoreGrace,
			after:   policy.History{StartedAt: ago(time.Minute)},
			why:     []string{"unreachable"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := policy.Input{
				Outcome:  tt.outcome,
				Reason:   reasonOf(tt.outcome),
				History:  tt.history,
				Settings: settings(tt.settings),
				Now:      now,
			}
			d, h := policy.Decide(in)
			if d.Action != tt.want || d.Cleared != tt.cleared {
				t.Errorf("action = %s, cleared = %v; want %s, %v (why: %s)", d.Action, d.Cleared, tt.want, tt.cleared, d.Why)
			}
			if !h.StartedAt.Equal(tt.after.StartedAt) || !h.TLSFailingSince.Equal(tt.after.TLSFailingSince) ||
				h.Streak != tt.after.Streak || h.TimeoutStreak != tt.after.TimeoutStreak ||
				h.RecoveryPending != tt.after.RecoveryPending {
				t.Errorf("history after =\n %+v\nwant\n %+v", h, tt.after)
			}
			for _, w := range tt.why {
				if !strings.Contains(d.Why, w) {
					t.Errorf("why %q does not contain %q", d.Why, w)
				}
			}
			checkWhy(t, d.Why)
		})
	}
}

// checkWhy holds every why to the shape an operator reads: one sentence,
// one line, no Go formatting accidents.
func checkWhy(t *testing.T, why string) {
	t.Helper()
	if why == "" || strings.ContainsAny(why, "\n\t") || strings.Contains(why, "%!") || strings.Contains(why, ". ") {
		t.Errorf("why %q is not one clean sentence", why)
	}
}

// TestStreakExamples runs the documented blip and outage sequences with
// --failure-threshold 2, one probe a minute, starting past grace.
func TestStreakExamples(t *testing.T) {
	tests := []struct {
		name     string
		outcomes []classify.Outcome
		want     []policy.Action
		settings func(*policy.Settings)
		start    time.Duration // age at the first probe; 0 = unknown start
	}{
		{
			name:     "refused, pass, refused",
			outcomes: []classify.Outcome{classify.Refused, classify.Pass, classify.Refused},
			want:     []policy.Action{policy.IgnoreBlip, policy.Stay, policy.IgnoreBlip},
		},
		{
			name:     "refused, timeout, refused",
			outcomes: []classify.Outcome{classify.Refused, classify.Timeout, classify.Refused},
			want:     []policy.Action{policy.IgnoreBlip, policy.IgnoreTimeout, policy.Redeploy},
		},
		{
			name:     "refused, refused, refused",
			outcomes: []classify.Outcome{classify.Refused, classify.Refused, classify.Refused},
			want:     []policy.Action{policy.IgnoreBlip, policy.Redeploy, policy.IgnoreGrace},
		},
		{
			name:     "a pending tls error neither adds nor resets",
			outcomes: []classify.Outcome{classify.DNS, classify.TLS, classify.Unreachable},
			want:     []policy.Action{policy.IgnoreBlip, policy.PendingTLS, policy.Redeploy},
		},
		{
			name:     "same with a known start past grace",
			outcomes: []classify.Outcome{classify.Refused, classify.Timeout, classify.Refused},
			want:     []policy.Action{policy.IgnoreBlip, policy.IgnoreTimeout, policy.Redeploy},
			start:    time.Hour,
		},
		{
			name:     "failures in grace do not count, the streak starts once grace ends",
			outcomes: []classify.Outcome{classify.Refused, classify.Refused, classify.Refused, classify.Refused},
			want:     []policy.Action{policy.IgnoreGrace, policy.IgnoreGrace, policy.IgnoreBlip, policy.Redeploy},
			start:    30 * time.Second, // ages 30s, 1m30s, 2m30s, 3m30s
		},
		{
			name: "outage, redeploy, grace, then the next outage needs a fresh streak",
			outcomes: []classify.Outcome{
				classify.Refused, classify.Refused, // blip, redeploy at t=1m
				classify.Refused, classify.Refused, // t=2m: age 1m, in grace; t=3m: age 2m, past
				classify.Refused,
			},
			want: []policy.Action{
				policy.IgnoreBlip, policy.Redeploy,
				policy.IgnoreGrace, policy.IgnoreBlip,
				policy.Redeploy,
			},
		},
		{
			name:     "escalated timeouts then a redeploy restart the count",
			outcomes: []classify.Outcome{classify.Timeout, classify.Timeout, classify.Timeout, classify.Timeout, classify.Timeout, classify.Timeout, classify.Timeout},
			settings: func(s *policy.Settings) { s.EscalateTimeoutsAfter = 2 },
			// t=0 1st ignored; t=1m 2nd decisive, blip; t=2m 3rd redeploy;
			// t=3m the count restarted: 1st again; t=4m 2nd decisive, age 2m: blip;
			// t=5m redeploy; t=6m 1st again.
			want: []policy.Action{
				policy.IgnoreTimeout, policy.IgnoreBlip, policy.Redeploy,
				policy.IgnoreTimeout, policy.IgnoreBlip, policy.Redeploy,
				policy.IgnoreTimeout,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := settings(func(s *policy.Settings) {
				s.FailureThreshold = 2
				if tt.settings != nil {
					tt.settings(s)
				}
			})
			var h policy.History
			if tt.start > 0 {
				h.StartedAt = ago(tt.start)
			}
			for i, o := range tt.outcomes {
				var d policy.Decision
				d, h = policy.Decide(policy.Input{
					Outcome: o, Reason: reasonOf(o), History: h, Settings: s,
					Now: now.Add(time.Duration(i) * time.Minute),
				})
				if d.Action != tt.want[i] {
					t.Fatalf("probe %d (%s): %s, want %s (why: %s)", i+1, o, d.Action, tt.want[i], d.Why)
				}
				checkWhy(t, d.Why)
			}
		})
	}
}

// TestSelfHealing follows the recovery marker: a redeploy sets it, failures
// keep it, the first pass clears it once.
func TestSelfHealing(t *testing.T) {
	s := policy.DefaultSettings()
	steps := []struct {
		o       classify.Outcome
		want    policy.Action
		cleared bool
	}{
		{classify.Refused, policy.Redeploy, false},
		{classify.Refused, policy.IgnoreGrace, false},
		{classify.Timeout, policy.IgnoreTimeout, false},
		{classify.TLS, policy.PendingTLS, false},
		{classify.Pass, policy.Stay, true},
		{classify.Pass, policy.Stay, false},
	}
	var h policy.History
	for i, st := range steps {
		var d policy.Decision
		d, h = policy.Decide(policy.Input{Outcome: st.o, Reason: reasonOf(st.o), History: h, Settings: s,
			Now: now.Add(time.Duration(i) * 10 * time.Second)})
		if d.Action != st.want || d.Cleared != st.cleared {
			t.Fatalf("step %d (%s): %s cleared=%v, want %s cleared=%v", i+1, st.o, d.Action, d.Cleared, st.want, st.cleared)
		}
	}
	if h.RecoveryPending {
		t.Fatal("marker still set after a pass")
	}
}

func TestForProbe(t *testing.T) {
	tests := []struct {
		name  string
		age   time.Duration
		known bool
		want  policy.History
	}{
		{"unknown", 5 * time.Minute, false, policy.History{}},
		{"negative age is unknown", -time.Second, true, policy.History{}},
		{"known", 5 * time.Minute, true, policy.History{StartedAt: ago(5 * time.Minute), TLSFailingSince: ago(5 * time.Minute)}},
		{"zero age", 0, true, policy.History{StartedAt: now, TLSFailingSince: now}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := policy.ForProbe(tt.age, tt.known, now)
			if !got.StartedAt.Equal(tt.want.StartedAt) || !got.TLSFailingSince.Equal(tt.want.TLSFailingSince) ||
				got.Streak != 0 || got.TimeoutStreak != 0 || got.RecoveryPending {
				t.Fatalf("ForProbe = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestProbeDecisions is what `probe` shows: one result, no history.
func TestProbeDecisions(t *testing.T) {
	tests := []struct {
		name     string
		outcome  classify.Outcome
		age      time.Duration
		known    bool
		settings func(*policy.Settings)
		want     policy.Action
	}{
		{"refused, no age", classify.Refused, 0, false, nil, policy.Redeploy},
		{"refused, young", classify.Refused, time.Minute, true, nil, policy.IgnoreGrace},
		{"refused, old", classify.Refused, time.Hour, true, nil, policy.Redeploy},
		{"threshold 2 gives a blip", classify.Refused, time.Hour, true, func(s *policy.Settings) { s.FailureThreshold = 2 }, policy.IgnoreBlip},
		{"timeout", classify.Timeout, time.Hour, true, nil, policy.IgnoreTimeout},
		{"escalate after 1", classify.Timeout, time.Hour, true, func(s *policy.Settings) { s.EscalateTimeoutsAfter = 1 }, policy.Redeploy},
		{"escalate after 2: a single probe never escalates", classify.Timeout, time.Hour, true, func(s *policy.Settings) { s.EscalateTimeoutsAfter = 2 }, policy.IgnoreTimeout},
		{"tls, forever", classify.TLS, time.Hour, true, nil, policy.PendingTLS},
		{"tls, age over tls-pending-max", classify.TLS, time.Hour, true, func(s *policy.Settings) { s.TLSPendingMax = 10 * time.Minute }, policy.Redeploy},
		{"tls, age at tls-pending-max", classify.TLS, 10 * time.Minute, true, func(s *policy.Settings) { s.TLSPendingMax = 10 * time.Minute }, policy.PendingTLS},
		{"tls, age over tls-pending-max but in grace", classify.TLS, 90 * time.Second, true, func(s *policy.Settings) { s.TLSPendingMax = time.Minute }, policy.IgnoreGrace},
		{"tls, unknown age waits for the cert", classify.TLS, 0, false, func(s *policy.Settings) { s.TLSPendingMax = time.Minute }, policy.PendingTLS},
		{"pass", classify.Pass, 0, false, nil, policy.Stay},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := policy.Decide(policy.Input{
				Outcome: tt.outcome, Reason: reasonOf(tt.outcome),
				History:  policy.ForProbe(tt.age, tt.known, now),
				Settings: settings(tt.settings), Now: now,
			})
			if d.Action != tt.want || d.Cleared {
				t.Fatalf("%s, want %s (why: %s)", d.Action, tt.want, d.Why)
			}
		})
	}
}

func TestHistoryJSON(t *testing.T) {
	b, err := json.Marshal(policy.History{})
	if err != nil || string(b) != "{}" {
		t.Fatalf("empty history = %s, %v; want {}", b, err)
	}
	h := policy.History{StartedAt: ago(time.Hour), Streak: 2, TimeoutStreak: 3, TLSFailingSince: ago(time.Minute), RecoveryPending: true}
	b, err = json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"started_at":"2025-06-01T11:00:00Z","streak":2,"timeout_streak":3,"tls_failing_since":"2025-06-01T11:59:00Z","recovery_pending":true}`
	if string(b) != want {
		t.Fatalf("history JSON = %s\nwant %s", b, want)
	}
	var back policy.History
	if err := json.Unmarshal(b, &back); err != nil || !back.StartedAt.Equal(h.StartedAt) || back.Streak != 2 ||
		back.TimeoutStreak != 3 || !back.TLSFailingSince.Equal(h.TLSFailingSince) || !back.RecoveryPending {
		t.Fatalf("round trip = %+v, %v", back, err)
	}

	b, _ = json.Marshal(policy.Decision{Action: policy.Stay, Why: "x"})
	if string(b) != `{"action":"stay","why":"x","cleared":false}` {
		t.Fatalf("decision JSON = %s", b)
	}
}

func TestDecisionTableDefault(t *testing.T) {
	got := policy.DecisionTable(policy.DefaultSettings())
	want := []policy.Row{
		{Result: "unknown", Condition: "-", Action: policy.Hold},
		{Result: "pass", Condition: "-", Action: policy.Stay},
		{Result: "pass", Condition: "after a redeploy", Action: policy.Stay},
		{Result: "pass", Condition: "degraded", Action: policy.Stay},
		{Result: "tls", Condition: "-", Action: policy.PendingTLS},
		{Result: "timeout", Condition: "-", Action: policy.IgnoreTimeout},
		{Result: "unreachable", Condition: "HTTP 401", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 403", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 407", Action: policy.Stay},
		{Result: "unreachable", Condition: "a login refused (amqp_auth, amqp_vhost, mysql_auth, postgres_auth, redis_auth)", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 429", Action: policy.IgnoreTimeout},
		{Result: "refused/dns/unreachable", Condition: "age < 2m0s", Action: policy.IgnoreGrace},
		{Result: "refused/dns/unreachable", Condition: "past grace, streak reaches 1", Action: policy.Redeploy},
	}
	compareRows(t, got, want)
	if w := got[2].Why; !strings.Contains(w, "clear the recovery marker") {
		t.Errorf("pass after redeploy why = %q", w)
	}
	if w := got[6].Why; !strings.Contains(w, `http_status 401): the server wants credentials`) || !strings.Contains(w, `WWW-Authenticate: Basic realm="app"; a redeploy cannot fix that`) {
		t.Errorf("401 why = %q", w)
	}
	if r := got[6]; r.Rule != 3 || r.Sub != "a" || got[10].Rule != 3 || got[10].Sub != "b" {
		t.Errorf("rules of 401 and 429 = %d%s, %d%s, want 3a, 3b", r.Rule, r.Sub, got[10].Rule, got[10].Sub)
	}
	if r := got[9]; r.Rule != 3 || r.Sub != "a" || !strings.Contains(r.Why, "_auth): ") || !strings.Contains(r.Why, "refused the URL's credentials") {
		t.Errorf("a refused login: rule %d%s, why %q, want 3a and the cause", r.Rule, r.Sub, r.Why)
	}
	if w := got[10].Why; !strings.Contains(w, "http_status 429), the 1st in a row: the server is throttling this client") {
		t.Errorf("429 why = %q", w)
	}
	if w := got[11].Why; !strings.Contains(w, "30s old, inside the 2m0s grace window") {
		t.Errorf("grace why = %q", w)
	}
	if w := got[12].Why; !strings.Contains(w, "past the 2m0s grace window (age 10m0s), 1 of 1 decisive failure in a row: enqueue a redeploy") {
		t.Errorf("redeploy why = %q", w)
	}
}

func TestDecisionTableSettings(t *testing.T) {
	got := policy.DecisionTable(policy.Settings{Grace: 5 * time.Minute, FailureThreshold: 3})
	want := []policy.Row{
		{Result: "unknown", Condition: "-", Action: policy.Hold},
		{Result: "pass", Condition: "-", Action: policy.Stay},
		{Result: "pass", Condition: "after a redeploy", Action: policy.Stay},
		{Result: "pass", Condition: "degraded", Action: policy.Stay},
		{Result: "tls", Condition: "-", Action: policy.PendingTLS},
		{Result: "timeout", Condition: "-", Action: policy.IgnoreTimeout},
		{Result: "unreachable", Condition: "HTTP 401", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 403", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 407", Action: policy.Stay},
		{Result: "unreachable", Condition: "a login refused (amqp_auth, amqp_vhost, mysql_auth, postgres_auth, redis_auth)", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 429", Action: policy.IgnoreTimeout},
		{Result: "refused/dns/unreachable", Condition: "age < 5m0s", Action: policy.IgnoreGrace},
		{Result: "refused/dns/unreachable", Condition: "past grace, streak < 3", Action: policy.IgnoreBlip},
		{Result: "refused/dns/unreachable", Condition: "past grace, streak reaches 3", Action: policy.Redeploy},
	}
	compareRows(t, got, want)
	if w := got[12].Why; !strings.Contains(w, "5m0s grace window") || !strings.Contains(w, "of 3 decisive failures") {
		t.Errorf("blip why = %q", w)
	}
}

func TestDecisionTableEscalation(t *testing.T) {
	got := policy.DecisionTable(policy.Settings{Grace: 2 * time.Minute, FailureThreshold: 2, EscalateTimeoutsAfter: 3, TLSPendingMax: 10 * time.Minute})
	const d = "refused/dns/unreachable"
	want := []policy.Row{
		{Result: "unknown", Condition: "-", Action: policy.Hold},
		{Result: "pass", Condition: "-", Action: policy.Stay},
		{Result: "pass", Condition: "after a redeploy", Action: policy.Stay},
		{Result: "pass", Condition: "degraded", Action: policy.Stay},
		{Result: "tls", Condition: "failing <= 10m0s", Action: policy.PendingTLS},
		{Result: "timeout", Condition: "< 3 in a row", Action: policy.IgnoreTimeout},
		{Result: "unreachable", Condition: "HTTP 401", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 403", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 407", Action: policy.Stay},
		{Result: "unreachable", Condition: "a login refused (amqp_auth, amqp_vhost, mysql_auth, postgres_auth, redis_auth)", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 429, < 3 in a row", Action: policy.IgnoreTimeout},
		{Result: d, Condition: "age < 2m0s", Action: policy.IgnoreGrace},
		{Result: d, Condition: "past grace, streak < 2", Action: policy.IgnoreBlip},
		{Result: d, Condition: "past grace, streak reaches 2", Action: policy.Redeploy},
		{Result: "tls", Condition: "failing > 10m0s, age < 2m0s", Action: policy.IgnoreGrace},
		{Result: "tls", Condition: "failing > 10m0s, past grace, streak < 2", Action: policy.IgnoreBlip},
		{Result: "tls", Condition: "failing > 10m0s, past grace, streak reaches 2", Action: policy.Redeploy},
		{Result: "timeout", Condition: ">= 3 in a row, age < 2m0s", Action: policy.IgnoreGrace},
		{Result: "timeout", Condition: ">= 3 in a row, past grace, streak < 2", Action: policy.IgnoreBlip},
		{Result: "timeout", Condition: ">= 3 in a row, past grace, streak reaches 2", Action: policy.Redeploy},
		{Result: "unreachable", Condition: "HTTP 429, >= 3 in a row, age < 2m0s", Action: policy.IgnoreGrace},
		{Result: "unreachable", Condition: "HTTP 429, >= 3 in a row, past grace, streak < 2", Action: policy.IgnoreBlip},
		{Result: "unreachable", Condition: "HTTP 429, >= 3 in a row, past grace, streak reaches 2", Action: policy.Redeploy},
	}
	compareRows(t, got, want)
	if w := got[4].Why; !strings.Contains(w, "failing for 5m0s, within the 10m0s TLS pending limit") {
		t.Errorf("tls pending why = %q", w)
	}
	if w := got[15].Why; !strings.Contains(w, "longer than the 10m0s TLS pending limit") {
		t.Errorf("tls decisive why = %q", w)
	}
	if w := got[18].Why; !strings.Contains(w, "the 3rd in a row, decisive from the 3rd") {
		t.Errorf("timeout decisive why = %q", w)
	}
}

func TestDecisionTableEdges(t *testing.T) {
	// Zero grace has no grace row; escalating from the 1st timeout has no
	// ignore-timeout row.
	got := policy.DecisionTable(policy.Settings{Grace: 0, FailureThreshold: 1, EscalateTimeoutsAfter: 1})
	want := []policy.Row{
		{Result: "unknown", Condition: "-", Action: policy.Hold},
		{Result: "pass", Condition: "-", Action: policy.Stay},
		{Result: "pass", Condition: "after a redeploy", Action: policy.Stay},
		{Result: "pass", Condition: "degraded", Action: policy.Stay},
		{Result: "tls", Condition: "-", Action: policy.PendingTLS},
		{Result: "unreachable", Condition: "HTTP 401", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 403", Action: policy.Stay},
		{Result: "unreachable", Condition: "HTTP 407", Action: policy.Stay},
		{Result: "unreachable", Condition: "a login refused (amqp_auth, amqp_vhost, mysql_auth, postgres_auth, redis_auth)", Action: policy.Stay},
		{Result: "refused/dns/unreachable", Condition: "past grace, streak reaches 1", Action: policy.Redeploy},
		{Result: "timeout", Condition: ">= 1 in a row, past grace, streak reaches 1", Action: policy.Redeploy},
		{Result: "unreachable", Condition: "HTTP 429, >= 1 in a row, past grace, streak reaches 1", Action: policy.Redeploy},
	}
	compareRows(t, got, want)
}

func compareRows(t *testing.T, got, want []policy.Row) {
	t.Helper()
	if len(got) != len(want) {
		for _, r := range got {
			t.Logf("%s | %s | %s", r.Result, r.Condition, r.Action)
		}
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		g := got[i]
		if g.Result != want[i].Result || g.Condition != want[i].Condition || g.Action != want[i].Action {
			t.Errorf("row %d = %s | %s | %s, want %s | %s | %s", i,
				g.Result, g.Condition, g.Action, want[i].Result, want[i].Condition, want[i].Action)
		}
		checkWhy(t, g.Why)
	}
}

// TestUnknownHolds: rule 0 comes first and changes nothing: a probe that
// could not be made says nothing about the target, whatever its history.
func TestUnknownHolds(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h := policy.History{Streak: 4, TimeoutStreak: 2, TLSFailingSince: now.Add(-time.Hour), RecoveryPending: true}
	for _, r := range []classify.Reason{classify.LocalError, classify.ResolverUnreachable} {
		d, back := policy.Decide(policy.Input{Outcome: classify.Unknown, Reason: r, History: h,
			Settings: policy.Settings{FailureThreshold: 1}, Now: now})
		if d.Action != policy.Hold || back != h || !strings.Contains(d.Why, string(r)) {
			t.Errorf("%s: %+v, history %+v", r, d, back)
		}
	}
}

// TestTLSWhySaysTheCause: "may still be warming" only for what an issuing
// certificate explains; a misconfiguration stays running (also past
// --tls-pending-max: a redeploy cannot fix it) with a why that names it.
func TestTLSWhySaysTheCause(t *testing.T) {
	for _, c := range []struct {
		reason  classify.Reason
		warming bool
		says    string
	}{
		{classify.TLSUnknownAuthority, true, "warming"},
		{classify.TLSHostnameMismatch, true, "warming"},
		{classify.TLSNotYetValid, true, "warming"},
		{classify.TLSNotTLS, false, "does not speak TLS"},
		{classify.TLSProtocolVersion, false, "no TLS version in common"},
		{classify.TLSClientCertRequired, false, "requires a client certificate"},
		{classify.TLSExpired, false, "expired"},
	} {
		in := policy.Input{Outcome: classify.TLS, Reason: c.reason, Now: now,
			History:  policy.History{TLSFailingSince: now.Add(-30 * time.Second)},
			Settings: policy.Settings{TLSPendingMax: time.Minute, FailureThreshold: 1}}
		d, _ := policy.Decide(in)
		if got := strings.Contains(d.Why, "warming"); got != c.warming || !strings.Contains(d.Why, c.says) {
			t.Errorf("%s: why %q: want warming=%v and %q", c.reason, d.Why, c.warming, c.says)
		}
		misconfigured := c.reason == classify.TLSNotTLS || c.reason == classify.TLSProtocolVersion || c.reason == classify.TLSClientCertRequired
		in.History.TLSFailingSince = now.Add(-time.Hour)
		if d, _ := policy.Decide(in); misconfigured && d.Action != policy.PendingTLS {
			t.Errorf("%s past --tls-pending-max: %s, want pending-tls (a redeploy cannot fix it)", c.reason, d.Action)
		}
	}
}

// TestPassWhy: a pass's words are the same whether made once (pass, ok:
// most results) or for the result (a pass with another reason).
func TestPassWhy(t *testing.T) {
	for _, c := range []struct {
		reason classify.Reason
		want   string
	}{
		{classify.OK, "pass (ok): the target answers, stay running"},
		{"", "pass: the target answers, stay running"},
		{classify.ConditionFailed, "pass (condition_failed): the target answers, stay running"},
	} {
		d, _ := policy.Decide(policy.Input{Outcome: classify.Pass, Reason: c.reason, Settings: policy.DefaultSettings(), Now: time.Now()})
		if d.Why != c.want {
			t.Errorf("pass with %q: why %q, want %q", c.reason, d.Why, c.want)
		}
	}
}
