package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
)

// TestWarming: a Redis loading its data set or busy with a script is
// ignored as a timeout is, past grace too, and counts towards
// --escalate-timeouts-after; other redis reasons are decisive.
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
		{classify.RedisLoading, 0, old, IgnoreTimeout, "unreachable (redis_loading), the 1st in a row: Redis is still warming up"},
		{classify.RedisBusy, 0, History{}, IgnoreTimeout, "redis_busy"},
		{classify.RedisLoading, 3, History{TimeoutStreak: 1}, IgnoreTimeout, "the 2nd in a row, turning decisive from the 3rd"},
		{classify.RedisLoading, 3, History{TimeoutStreak: 2}, Redeploy, "the 3rd in a row, decisive from the 3rd"},
		{classify.RedisMasterDown, 0, old, Redeploy, "redis_masterdown"},
		{classify.RedisAuth, 0, History{StartedAt: now.Add(-time.Second)}, IgnoreGrace, "grace"},
		{classify.PostgresStartingUp, 0, old, Redeploy, "postgres_starting_up"},
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
