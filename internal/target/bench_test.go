package target

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkTemplateRetained builds templates that share no options (each
// its own Host: header, as a fleet behind one load balancer writes them)
// and reports what each keeps alive: a watch holds one a distinct entry
// for the whole sweep (its figures: docs/benchmarks.md, "The memory
// policy").
func BenchmarkTemplateRetained(b *testing.B) {
	const n = 10000
	keep := make([]*Template, n)
	var m0, m1 runtime.MemStats
	for b.Loop() {
		clear(keep)
		runtime.GC()
		runtime.ReadMemStats(&m0)
		for i := range n {
			in := Defaults()
			in.Headers = []string{fmt.Sprintf("Host: svc-%d.example", i)}
			t, err := in.Build(func(string) string { return "" })
			if err != nil {
				b.Fatal(err)
			}
			keep[i] = t
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
	}
	b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/n, "B/template")
	runtime.KeepAlive(keep)
}
