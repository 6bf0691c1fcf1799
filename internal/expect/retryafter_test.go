package expect

import (
	"testing"
	"time"
)

func TestRetryAfterWholeSeconds(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 400e6, time.UTC)
	d := RetryAfter("Sun, 29 Nov 2026 12:00:05 GMT", now)
	if d == nil || *d != 5*time.Second {
		t.Errorf("HTTP-date Retry-After gave %v, want 5s", d)
	}
	if d := RetryAfter("7", now); d == nil || *d != 7*time.Second {
		t.Errorf("delta Retry-After gave %v", d)
	}
}

// TestRetryAfterClamped: huge values are clamped to MaxRetryAfter, never
// wrapped around into a negative delay.
func TestRetryAfterClamped(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"9999999999", "9223372036854775807", "99999999999999999999999", "31536000"} {
		if d := RetryAfter(v, now); d == nil || *d != MaxRetryAfter {
			t.Errorf("Retry-After %s gave %v, want %v", v, d, MaxRetryAfter)
		}
	}
	if d := RetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now); d == nil || *d != MaxRetryAfter {
		t.Errorf("far HTTP date gave %v", d)
	}
	for _, v := range []string{"-1", "1.5", "x"} {
		if d := RetryAfter(v, now); d != nil {
			t.Errorf("Retry-After %q gave %v, want none", v, *d)
		}
	}
}
