package expect

import (
	"bytes"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// TestDeepJSONBounded: 8 MiB of `[` under --expect-json used to make gjson
// recurse once per byte (fatal error: stack overflow at ~1 GB, the whole
// process gone); 1 MiB took 243 MB. Now it is a failed condition saying
// why, read and judged in memory proportional to the body (under 100 MB).
func TestDeepJSONBounded(t *testing.T) {
	e := &Expectations{JSON: []JSONExpect{{Path: "status", Value: "ready"}}}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := e.NewScan()
	chunk := bytes.Repeat([]byte("["), 32<<10)
	for range (8 << 20) / len(chunk) {
		s.Write(chunk)
	}
	got := e.Check(http.Header{}, s.Finish(), 8<<20)
	runtime.ReadMemStats(&after)
	if !strings.Contains(got, "nested deeper than 512 levels (at byte 512)") || !strings.Contains(got, "wanted status=ready") {
		t.Fatalf("Check = %q", got)
	}
	grew := int64(after.Sys) - int64(before.Sys)
	t.Logf("8 MiB of [: %q; memory from the OS +%d MiB, allocated %d MiB, stack %d KiB",
		got, grew>>20, (after.TotalAlloc-before.TotalAlloc)>>20, after.StackInuse>>10)
	if grew > 100<<20 {
		t.Errorf("the process grew by %d MiB, want under 100", grew>>20)
	}
	// Deep but within the limit, and valid: judged as usual.
	ok := []byte(strings.Repeat(`{"a":`, 500) + `{"status":"ready"}` + strings.Repeat("}", 500))
	e2 := &Expectations{JSON: []JSONExpect{{Path: strings.Repeat("a.", 500) + "status", Value: "ready"}}}
	if got := e2.Check(http.Header{}, Body{JSON: ok}, 1<<20); got != "" {
		t.Errorf("500 levels: %q", got)
	}
}
