package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SchemaVersion is the version of every JSON object healthctl prints.
const SchemaVersion = 1

// JSONLine writes v as one line of JSON, without HTML escaping ("<" stays
// "<": the output is read by shells and jq, not browsers), and with every
// character that could drive a terminal escaped (JSONEscape): what a server
// or a file controls reaches stdout as \u009b, never raw. A failed write
// (a full disk, a closed pipe) is a *WriteError, exit 74 in every command;
// a value that cannot be encoded is a bug and stays untyped.
func JSONLine(w io.Writer, v any) error {
	e := jsonEncoders.Get().(*jsonEncoder)
	defer e.release()
	b, err := e.encode(v, "")
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return NewWriteError("stdout", err)
	}
	return nil
}

// JSONIndent is JSONLine with each level indented by indent, as
// json.MarshalIndent and a final newline (the state file); its write error
// is returned as it is, for the caller to name the file.
func JSONIndent(w io.Writer, v any, indent string) error {
	e := jsonEncoders.Get().(*jsonEncoder)
	defer e.release()
	b, err := e.encode(v, indent)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// jsonEncoder is an encoder into its own buffer, kept for the next value
// (a sweep writes a line a target, not an encoder and a buffer grown
// anew each).
type jsonEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonEncoders = sync.Pool{New: func() any {
	e := &jsonEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// encode is every JSON healthctl writes: no HTML escaping, the
// terminal-active characters escaped. The bytes are e's until release.
func (e *jsonEncoder) encode(v any, indent string) ([]byte, error) {
	e.buf.Reset()
	e.enc.SetIndent("", indent)
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return JSONEscape(e.buf.Bytes()), nil
}

// AppendJSON appends v's encoding to b, without HTML escaping and without
// the newline: a part of a document (a kind's object inside a result's)
// that JSONLine or JSONIndent then writes whole, escaped. Its encoder is
// theirs, kept for the next value.
func AppendJSON(b []byte, v any) ([]byte, error) {
	e := jsonEncoders.Get().(*jsonEncoder)
	defer e.release()
	e.buf.Reset()
	e.enc.SetIndent("", "")
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))...), nil
}

// release hands e back for the next value; a buffer a big document grew
// is let go.
func (e *jsonEncoder) release() {
	if e.buf.Cap() <= 64<<10 {
		jsonEncoders.Put(e)
	}
}

// FormatMS renders a duration as milliseconds with one decimal: 12.4ms.
func FormatMS(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + "ms"
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
