package output

import (
	"encoding/json"
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

// hostileRunes are every character the one escaping rule covers.
var hostileRunes = []rune{0x00, 0x07, 0x1b, 0x0d, 0x7f, 0x80, 0x9b, 0x9d, 0x9f, 0x202a, 0x202e, 0x2066, 0x2069,
	0xfeff, 0x061c, 0x200e, 0x200f, 0x2028, 0x2029}

// TestJSONLineEscapes: every hostile character in any string (value or
// key) is written as \uXXXX, never raw, and reads back as itself.
func TestJSONLineEscapes(t *testing.T) {
	for _, r := range hostileRunes {
		s := "a" + string(r) + "b"
		in := map[string]any{s: []string{s, "plain é"}}
		var b strings.Builder
		if err := JSONLine(&b, in); err != nil {
			t.Fatal(err)
		}
		for _, c := range b.String() {
			if unsafeRune(c) && c != '\n' || c == '\n' && !strings.HasSuffix(b.String(), "}\n") {
				t.Errorf("%U: raw in %q", r, b.String())
			}
		}
		if strings.Count(b.String(), "\n") != 1 {
			t.Errorf("%U: not one line: %q", r, b.String())
		}
		var back map[string][]string
		if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back[s][0] != s || back[s][1] != "plain é" {
			t.Errorf("%U: %q reads back as %q (%v)", r, b.String(), back, err)
		}
	}
	var b strings.Builder
	_ = JSONIndent(&b, map[string]string{"k": "v\u009b"}, " ")
	if b.String() != "{\n \"k\": \"v\\u009b\"\n}\n" {
		t.Errorf("JSONIndent = %q", b.String())
	}
	if clean := []byte(`{"a":"bücher — ok"}`); &JSONEscape(clean)[0] != &clean[0] {
		t.Error("JSONEscape copied clean input")
	}
}

// FuzzJSONEscape: whatever string is encoded, the bytes hold no character
// a terminal acts on, and decode back to what encoding/json would.
func FuzzJSONEscape(f *testing.F) {
	for _, s := range []string{"ok", "\u009b2J", "\u202eevil", "\x7f", "\xff\xfe", "\ufeffbom"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		if err := JSONLine(&b, []string{s}); err != nil {
			t.Fatal(err)
		}
		out := strings.TrimSuffix(b.String(), "\n")
		for _, r := range out {
			if unsafeRune(r) {
				t.Fatalf("JSONLine(%q) = %q: keeps %U", s, out, r)
			}
		}
		var back, want []string
		std, _ := json.Marshal([]string{s})
		_ = json.Unmarshal(std, &want)
		if err := json.Unmarshal([]byte(out), &back); err != nil || back[0] != want[0] {
			t.Fatalf("JSONLine(%q) = %q reads back as %q (%v)", s, out, back, err)
		}
	})
}
