package tlsinfo

import (
	"testing"
	"time"
)

func TestDaysLeft(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, c := range []struct {
		after time.Duration
		want  int
	}{
		{29*day + 12*time.Hour, 29},
		{day, 1},
		{23 * time.Hour, 0},
		{-time.Hour, -1},
		{-day - time.Minute, -1}, // expired a day ago
		{-2*day - time.Minute, -2},
	} {
		if got := DaysLeft(now.Add(c.after), now); got != c.want {
			t.Errorf("DaysLeft(now%+v) = %d, want %d", c.after, got, c.want)
		}
	}
}
