package probe

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzRetryAfter: a server's Retry-After is ignored or a delay between 0
// and (for an HTTP date) the distance to that date: never negative, never
// wrapped around by an overflow.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-1", " 5 ", "Wed, 21 Oct 2015 07:28:00 GMT", "9999999999999",
		"9223372036854775807", "Fri, 31 Dec 9999 23:59:59 GMT", "1e3", "", "Mon, 30 Nov 2026 12:00:10 GMT"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d := retryAfter(v, now)
		if d == nil {
			return
		}
		if *d < 0 {
			t.Fatalf("retryAfter(%q) = %v: negative", v, *d)
		}
		if *d%time.Second != 0 {
			t.Fatalf("retryAfter(%q) = %v: not whole seconds", v, *d)
		}
	})
}

// FuzzStatusSet: a parsed --expect-status set prints as text that parses
// back to the same set.
func FuzzStatusSet(f *testing.F) {
	for _, s := range []string{"2xx", "200", "200-399", "200,204,3xx", " 2XX , 418 ", "599-100", "", "1xx,5xx", "100-599", "0", "600"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseStatusSet(s)
		if err != nil {
			return
		}
		again, err := ParseStatusSet(set.String())
		if err != nil {
			t.Fatalf("ParseStatusSet(%q).String() = %q does not parse: %v", s, set.String(), err)
		}
		for c := 100; c <= 599; c++ {
			if set.Contains(c) != again.Contains(c) {
				t.Fatalf("ParseStatusSet(%q): %d differs after the round trip through %q", s, c, set.String())
			}
		}
	})
}

// FuzzRedactor: a password in a URL's userinfo and a secret parameter's
// value (query or fragment) appear in none of the redactor's outputs —
// the URL, free text that quotes it, or the same URL in a server's text.
func FuzzRedactor(f *testing.F) {
	f.Add("s3cretpw", "t0ken", "boom: %s")
	f.Add("p%40ss", "a+b", "malformed MIME header line: \"Location: %s\"")
	f.Add("x", "y", "%s")
	f.Fuzz(func(t *testing.T, pw, tok, text string) {
		if len(pw) < 4 || len(tok) < 4 || !strings.Contains(text, "%s") {
			return
		}
		raw := "http://user:" + url.PathEscape(pw) + "@h.invalid/p?token=" + url.QueryEscape(tok) + "#access_token=" + url.QueryEscape(tok)
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		r := NewRedactor(nil, nil)
		r.AddURL(u)
		for _, out := range []string{r.URL(u), r.String(strings.Replace(text, "%s", raw, 1)), r.RawURL(raw),
			NewRedactor(nil, nil).String(strings.Replace(text, "%s", raw, 1))} {
			for _, sec := range []string{pw, tok, url.PathEscape(pw), url.QueryEscape(tok)} {
				if strings.Contains(out, sec) && !strings.Contains(strings.ReplaceAll(text, "%s", "")+"http://user:@h.invalid/p?token=#access_token=", sec) {
					t.Fatalf("secret %q left in %q (url %q)", sec, out, raw)
				}
			}
		}
	})
}
