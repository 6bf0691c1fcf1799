package state

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"
)

// TestSaveEscapesNames: target names holding C1 controls, bidi overrides,
// the BOM or DEL are written as \uXXXX (the file is read with cat and
// less too) and read back as themselves.
func TestSaveEscapesNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, f, err := Open(context.Background(), path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"csi\u009b2J", "osc\u009d0;x\u009c", "bidi\u202eevil\u2069", "bom\ufeff", "alm\u061c\u200e", "del\x7f", "esc\x1b[31m"}
	for _, n := range names {
		f.Targets[n] = Entry{Redeploys: 1}
	}
	if err := s.Save(f); err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(raw); {
		r, n := utf8.DecodeRune(raw[i:])
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e ||
			r >= 0x2066 && r <= 0x2069 || r == 0xfeff || r == 0x061c || r == 0x200e {
			t.Fatalf("raw %U at byte %d of\n%s", r, i, raw)
		}
		i += n
	}
	g, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if g.Targets[n].Redeploys != 1 {
			t.Errorf("%q did not read back", n)
		}
	}
}
