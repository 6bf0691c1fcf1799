package listen

import (
	"bytes"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/listen/board"

	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
)

// TestStatusStreamedAsWhole: the document written a target at a time is
// byte for byte the one encoded whole (hostile names and errors included,
// with and without paging's fields, and with no targets).
func TestStatusStreamedAsWhole(t *testing.T) {
	svc := New(Config{Interval: time.Minute, Now: func() time.Time { return t0.Add(time.Hour) }})
	h := svc.Handler()
	check := func(path string, st *board.Status) {
		t.Helper()
		var want bytes.Buffer
		if err := output.JSONIndent(&want, st, "  "); err != nil {
			t.Fatal(err)
		}
		if _, got := get(t, h, path); got != want.String() {
			t.Errorf("%s:\n%s\nwant\n%s", path, got, want.String())
		}
	}
	check("/status.json", &board.Status{SchemaVersion: board.SchemaVersion, Targets: []board.TargetStatus{}})
	for n := int64(1); n <= 3; n++ {
		publish(t, svc, sweepInput(n, policy.HoldFleet))
	}
	check("/status.json", svc.Status())
	p, err := svc.Status().Page("2", "", false)
	if err != nil {
		t.Fatal(err)
	}
	check("/status.json?limit=2", p)
}
