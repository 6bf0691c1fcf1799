// Package render is healthctl's output formats. Each -o value is one
// Format, chosen once in the root; a command hands it a Result and never
// asks which format is on. A Result has a document form (the -o json
// objects) and a text form; a format that needs a form of its own (Nagios)
// names it as an interface the results that have it implement.
package render

import (
	"github.com/healthctl/healthctl/internal/output"
)

// Writer is where a result is written, with the global switches that
// shape its text.
type Writer struct {
	*output.Streams
	// Quiet is -q: errors only.
	Quiet bool
	// Verbose is -v: details also when stdout is not a terminal.
	Verbose bool
	// Named says the user named the format (the flag, its variable or the
	// config file) rather than taking the default: watch's text on a pipe
	// is its JSON lines unless text was asked for by name.
	Named bool
	// Getenv reads the environment (COLUMNS for a table's width).
	Getenv func(string) string
}

// Details says whether text output shows more than the first line.
func (w Writer) Details() bool { return w.Verbose || w.OutTTY }

// Result is one thing a command reports.
type Result interface {
	// Docs are the result as documents, one JSON object a line.
	Docs(w Writer) Docs
	// Text writes the result for people.
	Text(w Writer) error
}

// Docs are a result's documents: N of them, At(i) the i-th (false: none
// at i). A sweep of 10,000 targets is 10,000 documents made as they are
// written, not a slice of them.
type Docs struct {
	N  int
	At func(i int) (any, bool)
}

// One is a single document.
func One(v any) Docs {
	return Docs{N: 1, At: func(int) (any, bool) { return v, true }}
}

// Format is one -o value.
type Format interface {
	Write(w Writer, r Result) error
}
