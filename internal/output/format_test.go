package output

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second: "30s", 2 * time.Minute: "2m", 90 * time.Second: "1m30s",
		500 * time.Millisecond: "500ms", time.Hour: "1h",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
