package output

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// OneLine keeps an error message on one line: its line breaks and runs of
// blanks one space, the rest shown as Untrusted shows it.
func OneLine(s string) string {
	return Untrusted(strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " "))
}

// Untrusted shows text healthctl did not write — what a server sent
// (certificate names, headers, Location, body excerpts, error text quoting
// them, a hook's output) and every name from a targets file — so that it
// cannot drive a terminal: control characters and escape sequences are
// shown as Go writes them (\x1b, \n, \r, \t, \x7f), C1 controls, bidi
// overrides and line separators as \u009b, \u202e, \u2028, and bytes that
// are not UTF-8 as \xff. A server cannot move the cursor, retitle the
// terminal, recolour the text or forge a line. Everything else, backslashes
// included, is shown as it is: the common case returns s itself.
func Untrusted(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || unsafeRune(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// UntrustedLines is Untrusted for multi-line text shown line by line (a
// hook's output): each line is escaped, the line breaks are kept.
func UntrustedLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = Untrusted(strings.TrimSuffix(l, "\r"))
	}
	return lines
}

// unsafeRune reports whether r, printed raw, could act on a terminal or
// reorder or break the text around it.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f: // C0, DEL, C1 (0x9b is CSI)
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c: // bidi
		return true
	case r == 0x2028, r == 0x2029, r == 0xfeff: // line and paragraph separators, BOM
		return true
	}
	return false
}

// JSONEscape makes encoded JSON safe to print: encoding/json escapes C0
// controls, U+2028 and U+2029 but passes DEL, C1 controls (U+009B is CSI,
// U+009D OSC in xterm's UTF-8 mode), bidi overrides and isolates, the
// Arabic letter mark, LRM/RLM and the BOM raw. JSONEscape writes each of
// them as \uXXXX, which every JSON reader decodes back to the same string.
// Outside strings JSON is ASCII, so every such rune found is inside a
// string and its escape is valid there. The common case returns b itself.
func JSONEscape(b []byte) []byte {
	i := 0
	for i < len(b) {
		c := b[i]
		if c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if unsafeRune(r) {
			break
		}
		i += n
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < 0x7f {
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if unsafeRune(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// Bounded cuts s to at most n bytes (at a rune boundary), marking the cut
// with "…".
func Bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
