package targetsfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mergeBomb is the merge-key bomb of 10 levels: `- &mN {<<: [*mN-1 ×10],
// name: aN}` (654 bytes took 215 s before the budget).
func mergeBomb(levels int) string {
	var b strings.Builder
	b.WriteString("targets:\n  - &m0 {name: a0, url: 'http://h/'}\n")
	for i := 1; i <= levels; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*m%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "  - &m%d {<<: [%s], name: a%d}\n", i, refs, i)
	}
	return b.String()
}

// TestMergeBombRefused: the bomb is an error naming the file at once, not
// after expanding it (the same ReadTargets runs on SIGHUP; the time is
// logged, the bound only catches an expansion), and a file of 3 levels
// (1,111 merged mappings) still reads.
func TestMergeBombRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.yaml")
	for _, levels := range []int{10, 16} {
		if err := os.WriteFile(path, []byte(mergeBomb(levels)), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err := ReadTargets(path)
		d := time.Since(start)
		if err == nil || !strings.HasPrefix(err.Error(), path+": aliases and merge keys (<<) expand") {
			t.Fatalf("%d levels: %v", levels, err)
		}
		if d > 5*time.Second {
			t.Errorf("%d levels: refused after %v, want < 5s", levels, d)
		}
		t.Logf("%d levels (%d bytes): refused in %v", levels, len(mergeBomb(levels)), d)
	}
	if _, err := ParseTargets("t.yaml", []byte(mergeBomb(3))); err != nil {
		t.Errorf("3 levels: %v", err)
	}
}

// TestLinesCountCR: a file with bare CR (old Mac) or CRLF (Windows) line
// ends gets the line numbers an editor shows.
func TestLinesCountCR(t *testing.T) {
	for _, nl := range []string{"\n", "\r\n", "\r"} {
		src := strings.ReplaceAll("targets:\n  - name: a\n  - name: a\n", "\n", nl)
		_, err := ParseTargets("t.yaml", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), `t.yaml:3: target "a": duplicate name (first at line 2)`) {
			t.Errorf("%q: %v", nl, err)
		}
	}
	if n := countLines([]byte(" \r\r0")); n != 3 {
		t.Errorf("countLines = %d", n)
	}
}
