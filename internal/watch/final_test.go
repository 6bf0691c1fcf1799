package watch

import (
	"context"
	"maps"
	"testing"
	"time"
	"unsafe"

	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/state"
)

// TestFinalStateIsStateWithoutACopy: after the last sweep, FinalState is
// what State returns (stamped alike), and it is the watcher's own state, not
// a copy; a probe's URL text equal to its target's is the target's.
func TestFinalStateIsStateWithoutACopy(t *testing.T) {
	f := newFake()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := state.New()
	st.Sweeps = 4
	w := New(Config{Targets: []*Endpoint{newTarget("a"), newTarget("b")}, Settings: policy.DefaultSettings(), Probe: f.probe,
		Now: func() time.Time { return now }}, st)
	s := w.Sweep(context.Background())
	copied, final := w.State(), w.FinalState()
	if final != st || final.Sweeps != 5 || final.Saved != now || final.SchemaVersion != state.SchemaVersion ||
		!maps.Equal(final.Targets, copied.Targets) || copied.Sweeps != final.Sweeps || len(final.Targets) != 2 {
		t.Fatalf("FinalState %+v, State %+v", final, copied)
	}
	if it := s.Items[0]; it.Result.URL != it.Endpoint.URL || unsafeStringData(it.Result.URL) != unsafeStringData(it.Endpoint.URL) {
		t.Errorf("the result's URL %q is not its target's text", it.Result.URL)
	}
}

func unsafeStringData(s string) *byte { return unsafe.StringData(s) }
