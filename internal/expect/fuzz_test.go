package expect

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/healthctl/healthctl/internal/jsondepth"
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

// FuzzLastWins: the copy the body conditions read a body with a duplicate
// key in is the document encoding/json reads (the last value of a key
// counts), valid JSON, and without a duplicate key.
func FuzzLastWins(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":1,"b":[1,{"c":1,"c":2}]},"a":3,"d":null}`,
		`[{"x":1,"\u0078":2}]`, `{"s":"\u00e9","s":"\ud83d\ude00"}`, `"plain"`, `12`, `{}`, `[]`, `{"a":1.50,"a":1e3}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || jsondepth.Check([]byte(s), 64) != nil || !utf8.ValidString(s) {
			return
		}
		out := lastWins(nil, gjson.Parse(s))
		// Every plain path the document has is walked to the value the
		// copy (which names no key twice) holds there.
		var paths func(v gjson.Result, at string)
		paths = func(v gjson.Result, at string) {
			if at != "" && plainPath(at) {
				got, _ := lastPath(gjson.Parse(s), at)
				want := gjson.GetBytes(out, at)
				if got.Exists() != want.Exists() || got.Exists() && string(lastWins(nil, got)) != want.Raw {
					t.Fatalf("%s in %s: walked to %q, the copy %s has %q", at, s, got.Raw, out, want.Raw)
				}
			}
			if !v.IsObject() && !v.IsArray() {
				return // (ForEach hands a scalar to its iterator)
			}
			i := 0
			v.ForEach(func(k, c gjson.Result) bool {
				seg := k.String()
				if v.IsArray() {
					seg = strconv.Itoa(i) // (an element's key is empty)
				}
				i++
				if at != "" {
					seg = at + "." + seg
				}
				paths(c, seg)
				return true
			})
		}
		paths(gjson.ParseBytes(out), "")
		if !json.Valid(out) {
			t.Fatalf("lastWins(%s) = %s: not JSON", s, out)
		}
		if hasDuplicateKeys(gjson.ParseBytes(out)) {
			t.Fatalf("lastWins(%s) = %s: still names a key twice", s, out)
		}
		var want, got any
		decode := func(b []byte, v *any) {
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			if err := d.Decode(v); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
		}
		decode([]byte(s), &want)
		decode(out, &got)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("lastWins(%s) = %s: encoding/json reads %v, not %v", s, out, got, want)
		}
	})
}
