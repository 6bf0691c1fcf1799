package output

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// SchemaVersion is the version of every JSON object healthctl prints.
const SchemaVersion = 1

// JSONLine writes v as one line of JSON, without HTML escaping ("<" stays
// "<": the output is read by shells and jq, not browsers).
func JSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// FormatMS renders a duration as milliseconds with one decimal: 12.4ms.
func FormatMS(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
}

// JSONMillis is a duration as fractional milliseconds for JSON (to the
// microsecond): 12.437.
func JSONMillis(d time.Duration) float64 {
	return math.Round(float64(d.Microseconds())) / 1000
}

// Seconds renders a duration as seconds with one decimal: 2.5s.
func Seconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// Duration prints 30s, 2m, 1m30s, 500ms (not 2m0s).
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
