// Package output holds what every command's rendering shares and nothing
// command-specific: the streams and their terminal and colour decisions,
// widths, URL display, duration formats, JSON lines and the table
// primitive. It imports no command package.
package output

import (
	"bytes"
	"io"
	"os"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"golang.org/x/term"
)

// Streams are where a command writes: results to Out, progress and errors to
// Err. TTY-ness and colour are decided once per stream, here.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	OutTTY bool
	ErrTTY bool
	// OutColor and ErrColor say whether each stream gets colour.
	OutColor bool
	ErrColor bool
	// ErrWidth is stderr's terminal width in columns (0: not a terminal or
	// unknown), for status lines redrawn in place.
	ErrWidth int
	// OutWidth is stdout's terminal width in columns (0: not a terminal or
	// unknown), for tables that must fit it.
	OutWidth int
}

// System returns the process's streams. Colour needs a terminal and no
// non-empty NO_COLOR.
func System() *Streams {
	s := &Streams{
		In:     os.Stdin,
		Out:    os.Stdout,
		Err:    os.Stderr,
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()),
	}
	s.OutColor, s.ErrColor = s.OutTTY, s.ErrTTY
	if s.ErrTTY {
		if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil {
			s.ErrWidth = w
		}
	}
	if s.OutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			s.OutWidth = w
		}
	}
	return s
}

// Test returns streams writing to buffers; tty forces terminal rendering
// (colour and details) so tests can see what a terminal user sees.
func Test(tty bool) (*Streams, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Streams{In: &bytes.Buffer{}, Out: &out, Err: &errb, OutTTY: tty, ErrTTY: tty, OutColor: tty, ErrColor: tty}, &out, &errb
}

// NoColor turns colour off on both streams (--no-color, NO_COLOR).
func (s *Streams) NoColor() {
	s.OutColor, s.ErrColor = false, false
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
