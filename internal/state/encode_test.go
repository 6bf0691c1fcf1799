package state

import (
	"bytes"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
)

// TestEncodeAsEncodingJSON: the file written a target at a time is, byte for
// byte, what output.JSONIndent writes for the whole file (encoding/json,
// indented, no HTML escaping, terminal-active characters escaped).
func TestEncodeAsEncodingJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	full := map[string]Entry{
		"b":                                {LastOutcome: classify.Pass, LastReason: "ok", LastAction: policy.Stay, LastProbe: at, Redeploys: 2},
		"a <&> \"q\"":                      {HookPending: true, HookStarted: at, History: policy.History{Streak: 3}},
		"\xff bad utf-8":                   {},
		"ünï":                              {Skipped: 1, HeldFleet: 1, HeldBudget: 2},
		"c1 \u009b bidi \u202e bom \ufeff": {LastReason: "ok"},
	}
	for name, f := range map[string]*File{
		"full":  {SchemaVersion: SchemaVersion, Saved: at, Sweeps: 7, Targets: full},
		"empty": {SchemaVersion: SchemaVersion, Targets: map[string]Entry{}},
		"nil":   {SchemaVersion: SchemaVersion},
	} {
		var want, got bytes.Buffer
		if err := output.JSONIndent(&want, f, " "); err != nil {
			t.Fatal(err)
		}
		if err := encode(&got, f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: encode wrote\n%s\noutput.JSONIndent writes\n%s", name, got.String(), want.String())
		}
	}
}
