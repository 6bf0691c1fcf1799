package expect

import (
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
		d := RetryAfter(v, now)
		if d == nil {
			return
		}
		if *d < 0 {
			t.Fatalf("RetryAfter(%q) = %v: negative", v, *d)
		}
		if *d%time.Second != 0 {
			t.Fatalf("RetryAfter(%q) = %v: not whole seconds", v, *d)
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
