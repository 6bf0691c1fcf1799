// Package output holds what every command's rendering shares and nothing
// command-specific: the streams and their terminal and colour decisions,
// widths, URL display, duration formats, JSON lines and the table
// primitive. It imports no command package.
package output

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"golang.org/x/term"
)

// Streams are where a command writes: results to Out, progress and errors to
// Err. TTY-ness, colour and cursor movement are decided once per stream, here.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	OutTTY bool
	ErrTTY bool
	// OutColor and ErrColor say whether each stream gets colour.
	OutColor bool
	ErrColor bool
	// ErrCursor says whether stderr takes cursor movement ("\r", ESC[K) for
	// a status line redrawn in place: a terminal that is not TERM=dumb.
	ErrCursor bool
	// OutWidth and ErrWidth are each stream's terminal width in columns (0:
	// not a terminal or unknown): tables and status lines fit in them.
	OutWidth int
	ErrWidth int
}

// System returns the process's streams. Colour needs a terminal (and, see
// Term and NoColor, no TERM=dumb and no non-empty NO_COLOR).
func System() *Streams {
	s := &Streams{
		In:     os.Stdin,
		Out:    os.Stdout,
		Err:    os.Stderr,
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()),
	}
	s.OutColor, s.ErrColor, s.ErrCursor = s.OutTTY, s.ErrTTY, s.ErrTTY
	if s.OutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			s.OutWidth = w
		}
	}
	if s.ErrTTY {
		if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil {
			s.ErrWidth = w
		}
	}
	return s
}

// Test returns streams writing to buffers; tty forces terminal rendering
// (colour, details, tables drawn with borders, a status line redrawn in
// place) so tests can see what a terminal user sees.
func Test(tty bool) (*Streams, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Streams{In: &bytes.Buffer{}, Out: &out, Err: &errb, OutTTY: tty, ErrTTY: tty, OutColor: tty, ErrColor: tty, ErrCursor: tty}, &out, &errb
}

// NoColor turns colour off on both streams (--no-color, NO_COLOR).
func (s *Streams) NoColor() {
	s.OutColor, s.ErrColor = false, false
}

// Term applies the TERM variable: "dumb" (Emacs shells, some CI consoles)
// gets no colour and no cursor movement; everything else is as detected.
func (s *Streams) Term(term string) {
	if term == "dumb" {
		s.NoColor()
		s.ErrCursor = false
	}
}

// OutTable is the table shape for stdout: drawn with borders and fitted to
// the terminal's width on a terminal, tab-separated into a pipe or file.
func (s *Streams) OutTable() TableOptions {
	return TableOptions{Terminal: s.OutTTY, Width: s.OutWidth}
}

// paint returns a colour that is on only when the stream wants colour; never
// the package-global toggle of fatih/color.
func paint(on bool, attrs ...color.Attribute) *color.Color {
	c := color.New(attrs...)
	if on {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return c
}

// Columns is the width output to stdout must fit: the terminal's when
// stdout is one, else $COLUMNS (as ls and many tools honour it), else 0
// (unknown: no limit).
func (s *Streams) Columns(getenv func(string) string) int {
	if s.OutWidth > 0 {
		return s.OutWidth
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}
