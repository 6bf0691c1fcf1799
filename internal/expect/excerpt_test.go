package expect

import (
	"strings"
	"testing"
)

// TestExcerpt: the shown start of a body is redacted before it is cut, cut
// on a character's edge at ExcerptMax bytes, marked when more followed, and
// valid UTF-8 whatever the server sent.
func TestExcerpt(t *testing.T) {
	mask := func(s string) string { return strings.ReplaceAll(s, "hunter2", "***") }
	long := strings.Repeat("a", ExcerptMax-3) + "hunter2" + "tail"
	for _, tc := range []struct {
		name string
		head string
		more bool
		want string
	}{
		{"empty", "", false, ""},
		{"short", `{"status":"DOWN"}`, false, `{"status":"DOWN"}`},
		{"more followed", "abc", true, "abc…"},
		{"secret redacted", "login failed for hunter2", false, "login failed for ***"},
		{"a secret across the cut is redacted first", long, false, strings.Repeat("a", ExcerptMax-3) + "***…"},
		{"cut on a rune's edge", strings.Repeat("a", ExcerptMax-1) + "é", false, strings.Repeat("a", ExcerptMax-1) + "…"},
		{"invalid UTF-8", "a\xffb", false, "a\uFFFDb"},
		{"control characters kept for the output to escape", "a\x1bb\n", false, "a\x1bb\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Excerpt([]byte(tc.head), tc.more, mask)
			if got != tc.want {
				t.Errorf("Excerpt(%q, %v) = %q, want %q", tc.head, tc.more, got, tc.want)
			}
			if len(strings.TrimSuffix(got, "…")) > ExcerptMax {
				t.Errorf("%d bytes, more than %d", len(got), ExcerptMax)
			}
		})
	}
}

// TestScanKeepsHead: the scan keeps the body's start across chunks, and
// only the start.
func TestScanKeepsHead(t *testing.T) {
	var e Expectations
	s := e.NewScan()
	s.Write([]byte("hello "))
	s.Write([]byte(strings.Repeat("x", 3*ExcerptMax)))
	b := s.Finish()
	if len(b.Head) != 2*ExcerptMax || !strings.HasPrefix(string(b.Head), "hello xxx") {
		t.Fatalf("head %d bytes: %.20q", len(b.Head), b.Head)
	}
	if p := s.Partial(); string(p.Head) != string(b.Head) {
		t.Fatalf("partial head differs")
	}
}
