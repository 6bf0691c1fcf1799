package watch

import "testing"

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		n, own int
		want   int64
	}{{0, 0, 80 << 20}, {10000, 0, 80 << 20}, {30000, 0, 80<<20 + 20000*1724}, {100000, 0, 80<<20 + 90000*1724},
		{10000, 10000, 80<<20 + 10000*3072}} {
		if got := MemoryLimit(tc.n, tc.own); got != tc.want {
			t.Errorf("MemoryLimit(%d, %d) = %d, want %d", tc.n, tc.own, got, tc.want)
		}
	}
	// The budget's lines (SPEC §10: 96 MiB at 10,000, 256 MiB at 100,000)
	// with the ~13 MiB the process holds beside the limit.
	if MemoryLimit(10000, 0)+13<<20 > 96<<20 || MemoryLimit(100000, 0)+13<<20 > 256<<20 {
		t.Errorf("the limit leaves no room under the budget")
	}
}

// TestLongRunningMemoryLimit: twice one sweep's limit less 48 MiB, never
// below 256 MiB; within twice the --once budget's line at 100,000 targets
// (256 MiB) with the ~13 MiB the process holds beside it.
func TestLongRunningMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		n, own int
		want   int64
	}{{0, 0, 256 << 20}, {10000, 0, 256 << 20}, {60000, 0, 2*(80<<20+50000*1724) - 48<<20},
		{100000, 0, 2*(80<<20+90000*1724) - 48<<20}, {100000, 1000, 2*(80<<20+90000*1724+1000*3072) - 48<<20}} {
		if got := LongRunningMemoryLimit(tc.n, tc.own); got != tc.want {
			t.Errorf("LongRunningMemoryLimit(%d, %d) = %d, want %d", tc.n, tc.own, got, tc.want)
		}
	}
	if LongRunningMemoryLimit(100000, 0)+13<<20 > 2*256<<20 {
		t.Errorf("the long-running limit leaves no room under twice the budget")
	}
}
