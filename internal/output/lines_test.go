package output

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestJSONLines: every line in order, the skipped ones left out, the same
// bytes as JSONLine one by one, on one P and on several, for counts around
// the block size.
func TestJSONLines(t *testing.T) {
	line := func(i int) (any, bool) {
		if i%7 == 3 {
			return nil, false
		}
		return map[string]any{"i": i, "s": fmt.Sprintf("x\x1b%d", i)}, true
	}
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, linesBlock - 1, linesBlock, linesBlock + 1, 5*linesBlock + 17} {
			var want bytes.Buffer
			for i := range n {
				if v, ok := line(i); ok {
					if err := JSONLine(&want, v); err != nil {
						t.Fatal(err)
					}
				}
			}
			var got bytes.Buffer
			if err := JSONLines(&got, n, line); err != nil {
				t.Fatalf("procs %d, n %d: %v", procs, n, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("procs %d, n %d: lines differ from JSONLine's, one by one", procs, n)
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

// failAfter takes n bytes, then fails every write.
type failAfter struct {
	n      int
	writes atomic.Int64
}

func (f *failAfter) Write(b []byte) (int, error) {
	f.writes.Add(1)
	if len(b) > f.n {
		return 0, errors.New("no space left on device")
	}
	f.n -= len(b)
	return len(b), nil
}

// TestJSONLinesErrors: a write error is a *WriteError naming stdout and
// stops the writing; an encoding error (a bug) comes back as itself; no
// goroutine is left behind.
func TestJSONLinesErrors(t *testing.T) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	before := runtime.NumGoroutine()
	n := 20 * linesBlock
	line := func(i int) (any, bool) { return map[string]int{"i": i}, true }

	w := &failAfter{n: 100}
	err := JSONLines(w, n, line)
	var we *WriteError
	if !errors.As(err, &we) || we.What != "stdout" || !strings.Contains(err.Error(), "no space") {
		t.Errorf("write error: got %v, want a *WriteError for stdout", err)
	}
	if got := w.writes.Load(); got != 1 {
		t.Errorf("%d writes after the failed one, want none", got-1)
	}

	bad := func(i int) (any, bool) {
		if i == 3*linesBlock+5 {
			return func() {}, true // json cannot encode a func
		}
		return i, true
	}
	var out bytes.Buffer
	err = JSONLines(&out, n, bad)
	if err == nil || errors.As(err, &we) {
		t.Errorf("encoding error: got %v, want json's own error", err)
	}
	if got := strings.Count(out.String(), "\n"); got != 3*linesBlock {
		t.Errorf("%d lines written before the bad block, want %d (the blocks before it)", got, 3*linesBlock)
	}
	// A worker has called wg.Done before it exits: give the exits a
	// generous while (a leaked worker blocks for good and still counts).
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > before {
		t.Errorf("%d goroutines left behind", got-before)
	}
}
