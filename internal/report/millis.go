package report

import (
	"strconv"

	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
)

// Millis is timings_ms: each phase a probe reached, in fractional
// milliseconds to the microsecond, under its name. Its JSON is the bytes
// encoding/json writes for a map[string]float64 of them (names in
// alphabetical order, values as its float encoder writes them), which is
// what timings_ms was: a map a line cost a sweep's lines a dozen
// allocations each (the map, and encoding/json's reflection over it to
// sort its keys), ~5 % of a 10,000-target sweep's allocations. A phase not
// reached is absent; no phase is {}.
type Millis probe.Timings

// phasesByName is probe.Phases in the order encoding/json writes a map's
// keys, sorted (TestPhasesByName): a literal, built by no code at start-up.
var phasesByName = []probe.Phase{probe.PhaseConnect, probe.PhaseDNS, probe.PhaseProxy, probe.PhaseTLS,
	probe.PhaseTotal, probe.PhaseTransfer, probe.PhaseTTFB}

// MarshalJSON writes the phases reached, as a map of them would be.
func (m Millis) MarshalJSON() ([]byte, error) {
	t := probe.Timings(m)
	b := make([]byte, 0, 2+24*t.Len())
	b = append(b, '{')
	for _, ph := range phasesByName {
		d, ok := t.Get(ph)
		if !ok {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), ph...), `":`...)
		// JSONMillis is 0 or at least 0.001 (whole microseconds), where
		// encoding/json's float encoder writes 'f' with the shortest
		// digits: this format.
		b = strconv.AppendFloat(b, output.JSONMillis(d), 'f', -1, 64)
	}
	return append(b, '}'), nil
}
