package output

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

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
