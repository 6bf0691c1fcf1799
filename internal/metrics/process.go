package metrics

import (
	"bufio"
	"io"
	"runtime"
)

// Process figures are the long-running watch's own health, under the names
// client_golang's process and Go collectors use (so existing dashboards and
// alerts work) without linking client_golang (its start-up cost, see docs/benchmarks.md): resident memory and open file descriptors from /proc/self where
// there is one (Linux), goroutines from the runtime.

// ProcessFigures are the process's own figures at one moment; RSS and FDs
// are -1 where the platform does not tell.
type ProcessFigures struct {
	RSS        int64
	FDs        int
	Goroutines int
}

// ReadProcess measures the process now.
func ReadProcess() ProcessFigures {
	p := ProcessFigures{RSS: -1, FDs: -1, Goroutines: runtime.NumGoroutine()}
	readProc(&p)
	return p
}

// WriteProcess writes process_resident_memory_bytes, process_open_fds and
// go_goroutines (those the platform tells).
func WriteProcess(w io.Writer, p ProcessFigures) error {
	b := bufio.NewWriter(w)
	m := &metricWriter{b: b}
	if p.RSS >= 0 {
		m.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.")
		m.sample("process_resident_memory_bytes", float64(p.RSS))
	}
	if p.FDs >= 0 {
		m.family("process_open_fds", "gauge", "Number of open file descriptors.")
		m.sample("process_open_fds", float64(p.FDs))
	}
	m.family("go_goroutines", "gauge", "Number of goroutines that currently exist.")
	m.sample("go_goroutines", float64(p.Goroutines))
	return b.Flush()
}
