package state

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParse: whatever a state file holds, Parse returns an error or a file
// that healthctl can write back (json encodes it: no year past 9999, no
// NaN) and that parses again to the same content — a state file read once
// can always be saved.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"version":1}`,
		`{"version":1,"sweeps":3,"targets":{"api":{"streak":2,"last_outcome":"pass","started_at":"2026-11-29T12:00:00Z"}}}`,
		`{"version":1,"targets":{"x":{"started_at":"10000-01-01T00:00:00Z"}}}`,
		`{"version":2}`, `{"version":1,"targets":{"":{}}}`, `{"version":1} {"version":1}`,
		`{"version":1,"targets":{"a":{"streak":-1}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := Parse("state.json", data)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(st); err != nil {
			t.Fatalf("Parse(%q) accepted a file that cannot be written back: %v", data, err)
		}
		again, err := Parse("state.json", buf.Bytes())
		if err != nil {
			t.Fatalf("Parse(%q): its own encoding %q does not parse: %v", data, buf.Bytes(), err)
		}
		b2, _ := json.Marshal(again)
		b1, _ := json.Marshal(st)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("Parse(%q): not stable through a write:\n%s\n%s", data, b1, b2)
		}
	})
}
