package targetsfile

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkParseTargets is the targets file of a 10,000-target sweep read
// into its entries (each its own name and path): the part of a --once
// run's start-up that runs on one core before any probe.
func BenchmarkParseTargets(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("targets:\n")
	for i := range 10000 {
		fmt.Fprintf(&buf, "  - name: env-%d\n    url: http://127.0.0.1:8080/env/%d/health\n", i, i)
	}
	data := buf.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseTargets("targets.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseTargetsSliced: 10,000 entries in users' shapes (comments,
// flow mappings, quoted URLs with a query, headers), read whole and a
// slice at a time.
func BenchmarkParseTargetsSliced(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("# the fleet\ndefaults:\n  max_time: 5s\ntargets:\n")
	for i := range 10000 {
		u := fmt.Sprintf("http://127.0.0.1:8080/health?full=1&env=%d", i)
		switch i % 3 {
		case 0:
			fmt.Fprintf(&buf, "  - name: env-%d\n    url: %s\n", i, u)
		case 1:
			fmt.Fprintf(&buf, "  - {name: env-%d, url: %q}\n", i, u)
		case 2:
			fmt.Fprintf(&buf, "  # team\n  - name: \"env-%d\"\n    url: '%s'\n    headers: [\"Host: env-%d.invalid\"]\n", i, u, i)
		}
	}
	data := buf.Bytes()
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseWhole("targets.yaml", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sliced", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := parseSliced("targets.yaml", data, 0, sliceItems); !ok {
				b.Fatal("not read in slices")
			}
		}
	})
}
