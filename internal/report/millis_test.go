package report

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
)

func TestPhasesByName(t *testing.T) {
	want := slices.Sorted(slices.Values(probe.Phases))
	if !slices.Equal(phasesByName, want) {
		t.Fatalf("phasesByName = %v, want probe.Phases sorted: %v", phasesByName, want)
	}
}

// TestMillisAsMap holds Millis's JSON to what encoding/json writes for the
// map[string]float64 timings_ms was: the same bytes for every set of
// phases, durations from 0 to hours, sub-microsecond ones included.
func TestMillisAsMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	durations := []time.Duration{0, 1, 999, time.Microsecond, 1500 * time.Nanosecond, 12437 * time.Microsecond,
		time.Second, 90 * time.Minute, 7 * 24 * time.Hour}
	for i := range 5000 {
		var tm probe.Timings
		m := map[string]float64{}
		for _, ph := range probe.Phases {
			if rng.IntN(2) == 0 {
				continue
			}
			d := durations[rng.IntN(len(durations))]
			if i%2 == 1 {
				d = time.Duration(rng.Int64N(int64(10 * time.Minute)))
			}
			tm.Set(ph, d)
			m[string(ph)] = output.JSONMillis(d)
		}
		got, err := json.Marshal(Millis(tm))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(m)
		if string(got) != string(want) {
			t.Fatalf("Millis(%v) = %s, want %s", tm, got, want)
		}
	}
}
