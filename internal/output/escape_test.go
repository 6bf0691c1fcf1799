package output

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUntrusted(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, 100% ASCII":         "plain text, 100% ASCII",
		"bücher.example — ok":            "bücher.example — ok",
		`C:\path\x1b stays`:              `C:\path\x1b stays`,
		"\x1b]0;PWNED\x07\x1b[2J":        `\x1b]0;PWNED\x07\x1b[2J`,
		"name\nFORGED PASS ok":           `name\nFORGED PASS ok`,
		"red\x1b[31mtext\r":              `red\x1b[31mtext\r`,
		"tab\tdel\x7fnul\x00":            `tab\tdel\x7fnul\x00`,
		"csi \u009b31m":                  `csi \u009b31m`,
		"bidi \u202eevil\u2066 \u2028ls": `bidi \u202eevil\u2066 \u2028ls`,
		"bad \xff\xfe utf8":              `bad \xff\xfe utf8`,
		"":                               "",
	} {
		if got := Untrusted(in); got != want {
			t.Errorf("Untrusted(%q) = %q, want %q", in, got, want)
		}
	}
	if got := UntrustedLines("a\x1b[2J\r\nb\n"); len(got) != 2 || got[0] != `a\x1b[2J` || got[1] != "b" {
		t.Errorf("UntrustedLines = %q", got)
	}
}

// FuzzUntrusted: whatever the input, the output is valid UTF-8 with no
// character a terminal acts on, and text without any is left alone.
func FuzzUntrusted(f *testing.F) {
	for _, s := range []string{"ok", "\x1b]0;x\x07", "a\nb", "\u009b", "\xff", "\u202e", "é\r\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Untrusted(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Untrusted(%q) = %q: not UTF-8", s, got)
		}
		for _, r := range got {
			if unsafeRune(r) {
				t.Fatalf("Untrusted(%q) = %q: keeps %U", s, got, r)
			}
		}
		clean := utf8.ValidString(s) && strings.IndexFunc(s, unsafeRune) < 0
		if clean != (got == s) {
			t.Fatalf("Untrusted(%q) = %q: changed %v, want %v", s, got, got != s, !clean)
		}
	})
}
