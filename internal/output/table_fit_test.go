package output

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTableFitsItsWidth: a drawn table is no wider than the terminal when
// its columns can narrow that far, it is not narrowed when it already fits,
// and no column narrows below its longest word (a word is never cut).
func TestTableFitsItsWidth(t *testing.T) {
	rows := [][]string{
		{"1", "refused, dns, unreachable", "past grace, streak reaches 3", "ignore-timeout", "refused (conn_refused), past the 5m0s grace window (age 25m0s)"},
		{"2", "pass", "-", "stay", "pass (ok): the target answers, stay running"},
	}
	widths := map[int]int{0: 3, 1: 13, 2: 30, 3: 16, 4: 30}
	for _, width := range []int{60, 80, 98, 100, 200} {
		var b strings.Builder
		tb := NewTable(&b, TableOptions{Terminal: true, Width: width, Wrap: true, Widths: widths}, "#", "result", "condition", "decision", "why")
		for _, r := range rows {
			tb.Append(r...)
		}
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		got := utf8.RuneCountInString(lines[0])
		// The longest words (+ padding) and the borders: 66 columns.
		if got > max(width, 66) {
			t.Errorf("width %d: the table is %d wide", width, got)
		}
		if width >= 98 && got != 98 {
			t.Errorf("width %d: the table is %d wide, narrowed although 98 fit", width, got)
		}
		for _, word := range []string{"ignore-timeout", "unreachable", "(conn_refused),"} {
			if !strings.Contains(b.String(), word) {
				t.Errorf("width %d: %q was cut:\n%s", width, word, b.String())
			}
		}
	}
}
