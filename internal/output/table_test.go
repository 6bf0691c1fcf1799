package output

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTableIntoAPipeIsTabSeparated(t *testing.T) {
	var b bytes.Buffer
	tab := NewTable(&b, TableOptions{Widths: map[int]int{1: 5}, Wrap: true}, "target", "outcome", "why")
	_ = tab.Append("http://a.invalid/h", "pass", "a long reason that would wrap")
	_ = tab.Append("b", "refused", "two\nlines\tand a tab")
	if err := tab.Render(); err != nil {
		t.Fatal(err)
	}
	want := "http://a.invalid/h\tpass\ta long reason that would wrap\nb\trefused\ttwo lines and a tab\n"
	if got := b.String(); got != want {
		t.Fatalf("pipe table:\n%q\nwant\n%q", got, want)
	}
}

func TestTableOnATerminalFitsItsWidth(t *testing.T) {
	long := strings.Repeat("word ", 20)
	for _, width := range []int{60, 80, 120} {
		var b bytes.Buffer
		tab := NewTable(&b, TableOptions{Terminal: true, Width: width, Wrap: true, Widths: map[int]int{0: 3, 1: 13, 2: 30, 3: 16, 4: 30}},
			"#", "result", "condition", "decision", "why")
		_ = tab.Append("1", "pass", long, "stay", long)
		if err := tab.Render(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "│") {
			t.Fatalf("%d: no borders on a terminal:\n%s", width, b.String())
		}
		for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("%d columns: a line is %d wide: %q", width, n, line)
			}
		}
	}
}

func TestTermDumb(t *testing.T) {
	s, _, _ := Test(true)
	s.Term("xterm-256color")
	if !s.OutColor || !s.ErrCursor {
		t.Fatal("a real terminal lost colour or cursor movement")
	}
	s.Term("dumb")
	if s.OutColor || s.ErrColor || s.ErrCursor {
		t.Fatalf("TERM=dumb: colour %v/%v, cursor %v", s.OutColor, s.ErrColor, s.ErrCursor)
	}
	if !s.OutTTY {
		t.Fatal("TERM=dumb is still a terminal (details, bordered tables)")
	}
}
