package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
)

// TestAnswersNoRedeployFixes: an HTTP 401, 403 or 407 (the probe's
// credentials) stays running whatever the age and streak, naming the
// challenge; a 429 is held as a timeout is, counted towards
// --escalate-timeouts-after; any other status, and a proxy's own 403, are
// decisive as before.
func TestAnswersNoRedeployFixes(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	old := History{StartedAt: now.Add(-time.Hour), Streak: 4, TimeoutStreak: 2}
	young := History{StartedAt: now.Add(-time.Second)}
	for _, tc := range []struct {
		name      string
		reason    classify.Reason
		status    int
		challenge string
		escalate  int
		h         History
		want      Action
		why       []string
		streak    int
		timeouts  int
	}{
		{"401 past grace", classify.HTTPStatus, 401, `Bearer realm="api", error="invalid_token"`, 0, old, Stay,
			[]string{"unreachable (http_status 401): the server wants credentials", `WWW-Authenticate: Bearer realm="api", error="invalid_token"`, "a redeploy cannot fix that, stay running"}, 4, 0},
		{"401 without a challenge", classify.HTTPStatus, 401, "", 0, young, Stay, []string{"(http_status 401)", "(-u, -H Authorization); a redeploy"}, 0, 0},
		{"403", classify.HTTPStatus, 403, "", 0, old, Stay, []string{"(http_status 403): the server forbids the probe this URL"}, 4, 0},
		{"407", classify.HTTPStatus, 407, `Basic realm="squid"`, 0, old, Stay, []string{"(http_status 407): a proxy wants credentials", `Proxy-Authenticate: Basic realm="squid"`}, 4, 0},
		{"429", classify.HTTPStatus, 429, "", 0, old, IgnoreTimeout, []string{"(http_status 429), the 3rd in a row: the server is throttling this client"}, 4, 3},
		{"429 before escalation", classify.HTTPStatus, 429, "", 4, old, IgnoreTimeout, []string{"the 3rd in a row, turning decisive from the 4th"}, 4, 3},
		{"429 escalated", classify.HTTPStatus, 429, "", 3, old, Redeploy, []string{"(http_status 429), the 3rd in a row, decisive from the 3rd", "enqueue a redeploy"}, 0, 0},
		{"429 escalated in grace", classify.HTTPStatus, 429, "", 1, young, IgnoreGrace, []string{"inside the 2m0s grace window"}, 0, 1},
		{"503", classify.HTTPStatus, 503, "", 0, old, Redeploy, []string{"unreachable (http_status), past the"}, 0, 0},
		{"a proxy's own 403", classify.ProxyError, 403, "", 0, old, Redeploy, []string{"proxy_error"}, 0, 0},
		{"a failed condition on a 401", classify.ConditionFailed, 401, "", 0, old, Redeploy, []string{"condition_failed"}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			s.EscalateTimeoutsAfter = tc.escalate
			d, h := Decide(Input{Outcome: classify.Unreachable, Reason: tc.reason, History: tc.h, Settings: s, Now: now,
				HTTPStatus: tc.status, Challenge: tc.challenge})
			if d.Action != tc.want {
				t.Fatalf("%s %q, want %s", d.Action, d.Why, tc.want)
			}
			for _, w := range tc.why {
				if !strings.Contains(d.Why, w) {
					t.Errorf("why %q lacks %q", d.Why, w)
				}
			}
			if h.Streak != tc.streak || h.TimeoutStreak != tc.timeouts {
				t.Errorf("streaks %d/%d, want %d/%d", h.Streak, h.TimeoutStreak, tc.streak, tc.timeouts)
			}
		})
	}
}
