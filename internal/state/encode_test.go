package state

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
)

// TestEncodeAsEncodingJSON: the file written a target at a time is, byte for
// byte, what encoding/json's indented encoder writes for the whole file.
func TestEncodeAsEncodingJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	full := map[string]Entry{
		"b":              {LastOutcome: classify.Pass, LastReason: "ok", LastAction: policy.Stay, LastProbe: at, Redeploys: 2},
		"a <&> \"q\"":    {HookPending: true, HookStarted: at, History: policy.History{Streak: 3}},
		"\xff bad utf-8": {},
		"ünï":            {Skipped: 1, HeldFleet: 1, HeldBudget: 2},
	}
	for name, f := range map[string]*File{
		"full":  {SchemaVersion: SchemaVersion, Saved: at, Sweeps: 7, Targets: full},
		"empty": {SchemaVersion: SchemaVersion, Targets: map[string]Entry{}},
		"nil":   {SchemaVersion: SchemaVersion},
	} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", " ")
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
		if err := encode(&got, f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: encode wrote\n%s\nencoding/json writes\n%s", name, got.String(), want.String())
		}
	}
}
