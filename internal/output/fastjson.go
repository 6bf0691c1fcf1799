package output

import (
	"math"
	"strconv"
)

// LineAppender is a value that can append its own JSON line (what
// JSONLine writes for it, newline included) without reflection, for the
// common shape of the value. ok false means it could not, and nothing
// appended counts: the line is encoded by encoding/json instead. A sweep
// writes one line a target, and encoding/json's reflection over a result
// was a tenth of the sweep's own CPU.
type LineAppender interface {
	AppendJSONLine(b []byte) (_ []byte, ok bool)
}

// LineValuer is a line that makes its value only when encoding/json must
// write it (its AppendJSONLine could not): JSONLines then writes
// LineValue() as JSONLine does, not the LineValuer itself.
type LineValuer interface {
	LineValue() any
}

// AppendPlainString appends s as a JSON string if every byte of it is
// printable ASCII other than '"' and '\\' (what encoding/json and
// JSONEscape leave as it is); ok false otherwise.
func AppendPlainString(b []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// AppendFloat appends f as encoding/json writes a float64, for the values
// it writes in 'f' notation (0, and magnitudes from 1e-6 to 1e21); ok false
// otherwise (NaN and infinities are encoding/json's errors).
func AppendFloat(b []byte, f float64) ([]byte, bool) {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) || math.IsNaN(f) {
		return b, false
	}
	if a := math.Abs(f); a != 0 && a < 1e12 {
		// A count of thousandths, as JSONMillis makes every duration:
		// when f is the double nearest n/1000, the shortest digits that
		// read back as f are n's with the point three from the right
		// (no other decimal of as few digits lies within half a unit
		// in the last place of f, which is under 1e-4 here), so they are
		// written without strconv's search (a sweep writes ~7 a target).
		if n := math.Round(f * 1000); n/1000 == f {
			return appendThousandths(b, int64(n)), true
		}
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), true
}

// appendThousandths appends n/1000 in decimal, without trailing zeros
// after the point (nor the point when nothing follows it).
func appendThousandths(b []byte, n int64) []byte {
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	b = strconv.AppendInt(b, n/1000, 10)
	frac := n % 1000
	if frac == 0 {
		return b
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	end := 3
	for digits[end-1] == '0' {
		end--
	}
	b = append(b, '.')
	return append(b, digits[:end]...)
}
