package expect

import "github.com/tidwall/gjson"

// An object that names a key twice ({"status":"down","status":"ok"}) is
// valid JSON whose meaning RFC 8259 leaves to the reader (§4: names
// SHOULD be unique). The readers a service's clients use — JSON.parse,
// jq, Python's json, Go's encoding/json — all keep the last value; gjson
// finds the first. The body conditions read it as those readers do: when
// a body names a key twice, the paths are looked up in a copy where each
// object keeps every key once, at its first place, with its last value.

// smallObject is the size up to which an object's keys are compared
// pairwise instead of through a map.
const smallObject = 16

// hasDuplicateKeys says some object in v names a key twice (keys compared
// as decoded text: "a" and "\u0061" are one key). v's nesting is bounded
// (jsondepth) before it is walked.
func hasDuplicateKeys(v gjson.Result) bool {
	switch {
	case v.IsObject():
		var keys []string
		var seen map[string]bool
		dup := false
		v.ForEach(func(k, val gjson.Result) bool {
			name := k.String()
			switch {
			case seen != nil:
				dup = seen[name]
				seen[name] = true
			default:
				for _, o := range keys {
					if o == name {
						dup = true
					}
				}
				keys = append(keys, name)
				if len(keys) > smallObject {
					seen = make(map[string]bool, 2*len(keys))
					for _, o := range keys {
						seen[o] = true
					}
				}
			}
			if !dup {
				dup = hasDuplicateKeys(val)
			}
			return !dup
		})
		return dup
	case v.IsArray():
		dup := false
		v.ForEach(func(_, val gjson.Result) bool {
			dup = hasDuplicateKeys(val)
			return !dup
		})
		return dup
	}
	return false
}

// lastWins appends v to dst with every object's keys once each: at the
// place a key first appears, with the value it was given last.
func lastWins(dst []byte, v gjson.Result) []byte {
	switch {
	case v.IsObject():
		type member struct{ key, val gjson.Result }
		var members []member
		at := map[string]int{}
		v.ForEach(func(k, val gjson.Result) bool {
			name := k.String()
			if i, ok := at[name]; ok {
				members[i].val = val
			} else {
				at[name] = len(members)
				members = append(members, member{k, val})
			}
			return true
		})
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, m.key.Raw...)
			dst = append(dst, ':')
			dst = lastWins(dst, m.val)
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
