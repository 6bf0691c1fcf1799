package watch

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// BenchmarkSweepLoopback is one --once sweep of 1,000 targets (each its own
// path, options built per probe as the CLI does for a shared template) with
// the real probe against one loopback server, 256 probes in flight: the
// in-process cost behind scripts/bench-watch.sh, without start-up, the
// targets file or output. Run it with -cpuprofile / -memprofile to see
// where a sweep goes.
func BenchmarkSweepLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	}))
	defer srv.Close()
	const n = 1000
	red := redact.NewRedactor(nil, nil)
	base := scheme.Options{Method: "GET", Header: http.Header{}, UserAgent: "healthctl/bench", Network: "tcp",
		Resolve: map[string][]string{}, TLSConfig: &tls.Config{},
		ConnectTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, MaxTime: 5 * time.Second,
		MaxBody: scheme.DefaultMaxBody, Redactor: red}
	targets := make([]*Endpoint, n)
	for i := range targets {
		raw := fmt.Sprintf("%s/env/%d/health", srv.URL, i)
		targets[i] = &Endpoint{Name: fmt.Sprintf("env-%d", i), URL: raw, Recover: true, Build: func() (*scheme.Options, error) {
			u, err := url.Parse(raw)
			if err != nil {
				return nil, err
			}
			o := base
			o.URL = u
			return &o, nil
		}}
	}
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		w := New(Config{Targets: targets, Settings: policy.DefaultSettings(), Concurrency: 256}, nil)
		if s := w.Sweep(context.Background()); s.Pass != n {
			b.Fatalf("%d of %d passed", s.Pass, n)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/target")
	// Per probe, the loopback server's side included (it runs in this
	// process): what the collector works for.
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*n), "allocs/target")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N*n), "B/target")
}

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
