package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/pgwire"
	"github.com/healthctl/healthctl/internal/rediswire"
)

// TestWarming: a Redis loading its data set, busy with a script or a
// replica without its master, and a PostgreSQL starting up, in recovery or
// shutting down (57P03) are ignored as a timeout is, past grace too, and
// count towards --escalate-timeouts-after; a refused login stays; other
// redis and postgres reasons are decisive.
func TestWarming(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	old := History{StartedAt: now.Add(-time.Hour)}
	for _, tc := range []struct {
		reason   classify.Reason
		escalate int
		h        History
		want     Action
		why      string
	}{
		{rediswire.Loading, 0, old, IgnoreTimeout, "unreachable (redis_loading), the 1st in a row: Redis is still warming up"},
		{rediswire.Busy, 0, History{}, IgnoreTimeout, "redis_busy"},
		{rediswire.Loading, 3, History{TimeoutStreak: 1}, IgnoreTimeout, "the 2nd in a row, turning decisive from the 3rd"},
		{rediswire.Loading, 3, History{TimeoutStreak: 2}, Redeploy, "the 3rd in a row, decisive from the 3rd"},
		{rediswire.MasterDown, 0, old, IgnoreTimeout, "unreachable (redis_masterdown), the 1st in a row: the Redis replica is waiting for its master"},
		{rediswire.MasterDown, 2, History{StartedAt: old.StartedAt, TimeoutStreak: 1}, Redeploy, "the 2nd in a row, decisive from the 2nd"},
		{pgwire.StartingUp, 0, old, IgnoreTimeout, "unreachable (postgres_starting_up), the 1st in a row: PostgreSQL is starting up or replaying its log"},
		{pgwire.Recovery, 0, History{StartedAt: old.StartedAt, TimeoutStreak: 40}, IgnoreTimeout, "the 41st in a row: PostgreSQL is starting up or replaying its log"},
		{pgwire.ShuttingDown, 0, old, IgnoreTimeout, "PostgreSQL is shutting down"},
		{pgwire.StartingUp, 3, History{StartedAt: old.StartedAt, TimeoutStreak: 1}, IgnoreTimeout, "turning decisive from the 3rd"},
		// A refused login stays, inside grace and past it: a redeploy
		// asks with the same credentials.
		{rediswire.AuthRefused, 0, History{StartedAt: now.Add(-time.Second)}, Stay, "unreachable (redis_auth): Redis refused the URL's credentials"},
		{pgwire.AuthRefused, 0, old, Stay, "a redeploy cannot fix that, stay running"},
		{pgwire.NoDatabase, 0, old, Redeploy, "decisive"},
	} {
		s := DefaultSettings()
		s.EscalateTimeoutsAfter = tc.escalate
		d, h := Decide(Input{Outcome: tc.reason.Outcome(), Reason: tc.reason, History: tc.h, Settings: s, Now: now})
		if d.Action != tc.want || !strings.Contains(d.Why, tc.why) {
			t.Errorf("%s (escalate %d, %+v): %s %q, want %s %q", tc.reason, tc.escalate, tc.h, d.Action, d.Why, tc.want, tc.why)
		}
		if classify.Warming(tc.reason) && tc.want == IgnoreTimeout && h.TimeoutStreak != tc.h.TimeoutStreak+1 {
			t.Errorf("%s: timeout streak %d, want %d", tc.reason, h.TimeoutStreak, tc.h.TimeoutStreak+1)
		}
	}
}
