package expect

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// An object that names a key twice ({"status":"down","status":"ok"}) is
// valid JSON whose meaning RFC 8259 leaves to the reader (§4: names
// SHOULD be unique). The readers a service's clients use — JSON.parse,
// jq, Python's json, Go's encoding/json — all keep the last value; gjson
// finds the first. The body conditions read it as those readers do:
//   - a plain path (keys and array indices between dots, the common case)
//     is walked here, taking the last member of each name: no copy, no
//     allocation, at any size;
//   - a gjson query (#, *, ?, @, |, !, escapes) is looked up in a copy of
//     the body where each object keeps every key once, at its first place,
//     with its last value — made only when the body names a key twice, and
//     only up to MaxDuplicateRewrite; a longer body is read as gjson reads
//     it (documented).

// MaxDuplicateRewrite is the longest body a query is resolved in as the
// readers above read it: finding and dropping duplicates costs a map entry
// and a slice element a member, so a hostile body's cost is bounded here,
// and health documents are short.
const MaxDuplicateRewrite = 64 << 10

// plainPath says path is keys and array indices between dots, which
// gjson reads as any reader would: no query, wildcard, modifier or escape.
func plainPath(path string) bool {
	if path == "" {
		return false
	}
	start := 0
	for i := 0; i <= len(path); i++ {
		if i < len(path) && path[i] != '.' {
			c := path[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				return false
			}
			continue
		}
		seg := path[start:i]
		if seg == "" || (seg[0] == '0' && len(seg) > 1 && digits(seg)) {
			return false // an empty segment, or an index gjson may read otherwise
		}
		start = i + 1
	}
	return true
}

// lastPath looks a plain path up as JSON.parse and jq do: in an object,
// the last member of the segment's name; in an array, the element at the
// segment's index. twice says some object on the way named the key twice.
func lastPath(doc gjson.Result, path string) (got gjson.Result, twice bool) {
	cur := doc
	for seg := range strings.SplitSeq(path, ".") {
		var next gjson.Result
		switch {
		case cur.IsObject():
			n := 0
			cur.ForEach(func(k, v gjson.Result) bool {
				if k.String() == seg {
					next = v
					n++
				}
				return true
			})
			twice = twice || n > 1
		case cur.IsArray() && digits(seg):
			i, err := strconv.Atoi(seg)
			if err != nil {
				return gjson.Result{}, twice
			}
			cur.ForEach(func(_, v gjson.Result) bool {
				if i == 0 {
					next = v
					return false
				}
				i--
				return true
			})
		}
		if !next.Exists() {
			return gjson.Result{}, twice
		}
		cur = next
	}
	return cur, twice
}

// hasDuplicateKeys says some object in v names a key twice (keys compared
// as decoded text: "a" and "\u0061" are one key). v's nesting is bounded
// (jsondepth) before it is walked.
func hasDuplicateKeys(v gjson.Result) bool {
	if !v.IsObject() && !v.IsArray() {
		return false // (ForEach hands a scalar to its iterator)
	}
	var seen map[string]bool
	if v.IsObject() {
		seen = map[string]bool{}
	}
	dup := false
	v.ForEach(func(k, val gjson.Result) bool {
		if seen != nil {
			name := k.String()
			dup = seen[name]
			seen[name] = true
		}
		dup = dup || hasDuplicateKeys(val)
		return !dup
	})
	return dup
}

// lastWins appends v to dst with every object's keys once each: at the
// place a key first appears, with the value it was given last.
func lastWins(dst []byte, v gjson.Result) []byte {
	switch {
	case v.IsObject():
		// The raw texts only (slices of the body): a member is two
		// strings here and an index in the map.
		type member struct{ key, val string }
		var members []member
		at := map[string]int{}
		v.ForEach(func(k, val gjson.Result) bool {
			name := k.String()
			if i, ok := at[name]; ok {
				members[i].val = val.Raw
			} else {
				at[name] = len(members)
				members = append(members, member{k.Raw, val.Raw})
			}
			return true
		})
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, m.key...)
			dst = append(dst, ':')
			dst = lastWins(dst, gjson.Parse(m.val))
		}
		return append(dst, '}')
	case v.IsArray():
		dst = append(dst, '[')
		first := true
		v.ForEach(func(_, val gjson.Result) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = lastWins(dst, val)
			return true
		})
		return append(dst, ']')
	}
	return append(dst, v.Raw...)
}
