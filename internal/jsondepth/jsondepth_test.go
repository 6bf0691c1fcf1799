package jsondepth

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int // -1: passes; else the offset of the error
	}{
		{`{"status":"ready","checks":[{"db":true}]}`, -1},
		{`[[[]]]`, -1},
		{`[[[[]]]]`, 3},
		{`{"a":"[[[[[[[[[[","b":{"c":{}}}`, -1}, // brackets inside strings do not count
		{`{"a":"\"[[[[[[[[","b":[[[[]]]]}`, 24}, // nor after an escaped quote
		{`]]]]][[[`, -1},                        // closing first never goes negative
		{`"unterminated [[[[[[`, -1},
		{`{{{{`, 3},
	} {
		err := Check([]byte(tc.in), 3)
		var e *Error
		switch {
		case tc.want < 0 && err != nil:
			t.Errorf("Check(%s) = %v, want nil", tc.in, err)
		case tc.want >= 0 && (!errors.As(err, &e) || e.Offset != tc.want || e.Limit != 3):
			t.Errorf("Check(%s) = %v, want the error at byte %d", tc.in, err, tc.want)
		}
	}
}

// TestDeepBodyBounded: 8 MiB of `[` is refused without recursion, at a
// cost proportional to the body; a body at the limit then costs gjson a
// bounded stack (it used to die with `fatal error: stack overflow` past
// 1 GB at 8 MiB, and take ~230 times the body in memory at 1 MiB).
func TestDeepBodyBounded(t *testing.T) {
	body := bytes.Repeat([]byte("["), 8<<20)
	var before, after runtime.MemStats
	// TotalAlloc counts the whole process (the race detector's runtime,
	// the test framework): the least of three runs is Check's own.
	least := ^uint64(0)
	for range 3 {
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := Check(body, Max)
		runtime.ReadMemStats(&after)
		var e *Error
		if !errors.As(err, &e) || e.Offset != Max || !strings.Contains(err.Error(), "nested deeper than 512 levels") {
			t.Fatalf("Check(8 MiB of [) = %v", err)
		}
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if least > 1<<10 {
		t.Errorf("Check allocated %d bytes", least)
	}
	// At the limit, repeated to 8 MiB: gjson validates and walks it.
	unit := strings.Repeat("[", Max-1) + strings.Repeat("]", Max-1)
	var b strings.Builder
	b.WriteString("[")
	for b.Len() < 8<<20 {
		b.WriteString(unit + ",")
	}
	b.WriteString("1]")
	deep := []byte(b.String())
	if err := Check(deep, Max); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&before)
	if !gjson.ValidBytes(deep) {
		t.Fatal("not valid")
	}
	_ = gjson.GetBytes(deep, "status")
	runtime.ReadMemStats(&after)
	t.Logf("8 MiB at depth %d: gjson allocated %d KiB, stack in use %d KiB", Max, (after.TotalAlloc-before.TotalAlloc)>>10, after.StackInuse>>10)
	if after.StackInuse > 16<<20 {
		t.Errorf("stack in use %d MiB", after.StackInuse>>20)
	}
}
