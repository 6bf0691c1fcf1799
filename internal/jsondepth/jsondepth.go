// Package jsondepth bounds the nesting of a JSON document before a
// recursive parser sees it. gjson validates and walks JSON by recursion,
// one Go stack frame per level: 8 MiB of `[` grows the goroutine stack past
// the runtime's 1 GB maximum, a `fatal error: stack overflow` that no
// recover catches and that ends the whole process (every target of a
// watch sweep with it). Check walks the bytes once, with no recursion and
// no allocation, so a document deeper than the limit is refused at a cost
// proportional to its length, and what passes costs gjson a bounded stack.
package jsondepth

import "fmt"

// Max is the deepest nesting the body conditions accept: health documents
// nest a handful of levels; encoding/json stops at 10,000.
const Max = 512

// Error is a document nested deeper than the limit.
type Error struct {
	// Limit is the depth allowed; Offset the byte at which it was passed.
	Limit, Offset int
}

func (e *Error) Error() string {
	return fmt.Sprintf("nested deeper than %d levels (at byte %d)", e.Limit, e.Offset)
}

// Check returns an *Error when b opens more than limit arrays or objects
// ('[' and '{' outside strings) without closing them. It does not
// validate: it only makes a recursive validation that follows safe.
func Check(b []byte, limit int) error {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > limit {
				return &Error{Limit: limit, Offset: i}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
