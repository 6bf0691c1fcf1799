package version

import "testing"

// TestReleaseStamp: what the release build sets through -ldflags -X is what
// Get reports.
func TestReleaseStamp(t *testing.T) {
	old := [3]string{version, commit, date}
	t.Cleanup(func() { version, commit, date = old[0], old[1], old[2] })
	version, commit, date = "1.2.3", "abc123", "2026-11-30T12:00:00Z"
	in := Get()
	if in.Version != "1.2.3" || in.Commit != "abc123" || in.Date != "2026-11-30T12:00:00Z" || in.GoVersion == "" || in.Platform == "" {
		t.Fatalf("Get() = %+v", in)
	}
	if String() != "1.2.3" {
		t.Errorf("String() = %q", String())
	}
}
