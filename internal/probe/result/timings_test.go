package result

import (
	"slices"
	"testing"
	"time"
)

// TestTimings: the array keeps what the map it replaced kept — a phase
// reached (even at 0) is present, one not reached absent, a phase set
// twice keeps the last — and yields the phases in waterfall order; a name
// that is not a phase is not kept.
func TestTimings(t *testing.T) {
	var tm Timings
	if tm.Len() != 0 || tm.Has(PhaseTotal) || tm.String() != "map[]" {
		t.Fatalf("zero value: len %d, total %v, %s", tm.Len(), tm.Has(PhaseTotal), tm)
	}
	tm.Set(PhaseTotal, 3*time.Millisecond)
	tm.Set(PhaseConnect, 0)
	tm.Set(PhaseTTFB, time.Second)
	tm.Set(PhaseTTFB, 2*time.Millisecond)
	tm.Set("other", time.Hour)
	if d, ok := tm.Get(PhaseConnect); !ok || d != 0 {
		t.Errorf("connect at 0: %v %v, want present", d, ok)
	}
	if _, ok := tm.Get(PhaseDNS); ok {
		t.Error("dns present, never set")
	}
	if _, ok := tm.Get("other"); ok || tm.Len() != 3 {
		t.Errorf("a name that is not a phase kept (len %d)", tm.Len())
	}
	if tm.Of(PhaseTTFB) != 2*time.Millisecond || tm.Of(PhaseDNS) != 0 {
		t.Errorf("Of: ttfb %v dns %v", tm.Of(PhaseTTFB), tm.Of(PhaseDNS))
	}
	var order []Phase
	for ph := range tm.All() {
		order = append(order, ph)
	}
	if want := []Phase{PhaseConnect, PhaseTTFB, PhaseTotal}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if got, want := tm.String(), "map[connect:0s ttfb:2ms total:3ms]"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
	for i, ph := range Phases {
		if phaseIndex(ph) != i {
			t.Errorf("phase %s at %d, Phases has it at %d", ph, phaseIndex(ph), i)
		}
	}
	if len(Phases) != numPhases {
		t.Errorf("%d phases, numPhases %d", len(Phases), numPhases)
	}
	m := TimingsOf(map[Phase]time.Duration{PhaseDNS: time.Millisecond, "x": 1})
	if m.Len() != 1 || m.Of(PhaseDNS) != time.Millisecond {
		t.Errorf("TimingsOf: %s", m)
	}
}
