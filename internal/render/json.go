package render

import (
	"bufio"
	"errors"

	"github.com/healthctl/healthctl/internal/output"
)

// JSON is -o json: a result's documents, one JSON object a line, and
// nothing else on stdout.
var JSON Format = jsonFormat{}

type jsonFormat struct{}

func (jsonFormat) Write(w Writer, r Result) error { return WriteDocs(w, r.Docs(w)) }

// WriteDocs writes documents as JSON lines: one write per 64 KiB, not per
// line, and the lines encoded on every core (output.JSONLines). Its error
// is stdout's (a *output.WriteError: exit 74).
func WriteDocs(w Writer, d Docs) error {
	if d.N == 1 {
		v, ok := d.At(0)
		if !ok {
			return nil
		}
		return output.JSONLine(w.Out, v)
	}
	if d.N == 0 {
		return nil
	}
	out := bufio.NewWriterSize(w.Out, 64<<10)
	if err := output.JSONLines(out, d.N, d.At); err != nil {
		// The encoder's own failure is a bug; a write's is in Flush.
		var we *output.WriteError
		if !errors.As(err, &we) {
			return err
		}
	}
	// A bufio.Writer keeps its first write error: Flush returns it.
	return output.NewWriteError("stdout", out.Flush())
}
