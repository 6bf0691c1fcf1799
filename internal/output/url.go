package output

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// DisplayURL shows a (redacted) URL the way a person reads it on a
// terminal: an internationalised host name in Unicode (bücher.example),
// not punycode (xn--bcher-kva.example) nor percent-encoded. JSON keeps the
// URL as it is.
func DisplayURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	end := len(rest)
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		end = j
	}
	authority := rest[:end]
	hostStart := strings.LastIndex(authority, "@") + 1
	host := authority[hostStart:]
	if strings.HasPrefix(host, "[") {
		return s // an IPv6 literal
	}
	if k := strings.LastIndex(host, ":"); k >= 0 {
		host = host[:k]
	}
	if !strings.Contains(host, "%") && !strings.Contains(strings.ToLower(host), "xn--") {
		return s // ASCII as typed: nothing to show differently (the common case)
	}
	plain, err := url.PathUnescape(host)
	if err != nil || host == "" {
		return s
	}
	uni, err := idna.Display.ToUnicode(plain)
	if err != nil || uni == host {
		return s
	}
	return s[:i+3] + authority[:hostStart] + uni + rest[hostStart+len(host):]
}

// ElideURL shortens a URL to at most n columns for a status line, keeping
// the scheme, host and port visible (they say which service it is) and
// eliding the middle of the path; only when even the host does not fit is
// the host itself cut in the middle.
func ElideURL(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	origin, path := s, ""
	if i := strings.Index(s, "://"); i >= 0 {
		if j := strings.IndexAny(s[i+3:], "/?#"); j >= 0 {
			origin, path = s[:i+3+j], s[i+3+j:]
		}
	}
	if room := n - utf8.RuneCountInString(origin); room >= 5 && path != "" {
		return origin + ShortenRunes(path, room)
	}
	origin = strings.TrimPrefix(strings.TrimPrefix(origin, "https://"), "http://")
	return ShortenRunes(origin, n)
}

// ShortenRunes cuts s to at most n runes by replacing its middle with "..."
// (ASCII, so a byte count of an ASCII URL stays its width).
func ShortenRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n < 8 {
		return string(r[:max(n, 0)])
	}
	keep := n - 3
	return string(r[:keep/2]) + "..." + string(r[len(r)-(keep-keep/2):])
}
