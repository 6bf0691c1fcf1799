package output

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// TableOptions shape a table. Terminal draws it with borders (else it is
// written as tab-separated lines, as gh does into a pipe); Width is the
// terminal's width in columns (0: unknown), which a drawn table is fitted
// in; Widths fixes column widths (by column index) and Wrap lets long cells
// wrap within them. Streams.OutTable gives Terminal and Width for stdout.
type TableOptions struct {
	Terminal bool
	Width    int
	Widths   map[int]int
	Wrap     bool
}

// Table is the one table primitive every command draws with, so how a
// table looks (and where it goes) is decided in one place: on a terminal a
// bordered table; into a pipe or a file one line per row, cells separated
// by tabs, no header and no borders, so awk, cut and CI logs read it.
type Table struct {
	w      io.Writer
	opt    TableOptions
	header []string
	rows   [][]string
}

// tableBorder is the columns a drawn table adds besides its columns' widths:
// one "│" around the row and between cells. (A width given to tablewriter
// includes the cell's padding, one space each side.)
func tableBorder(cols int) int { return cols + 1 }

// cellPadding is the padding inside a column's width.
const cellPadding = 2

// NewTable starts a table with its header row.
func NewTable(w io.Writer, opt TableOptions, header ...string) *Table {
	return &Table{w: w, opt: opt, header: header}
}

// fitWidths scales fixed column widths down, in proportion, so that the
// drawn table fits in a terminal of width columns; a column keeps at least
// its longest word (minWidths), which no wrapping can split. Unknown width
// or widths that already fit are returned as given.
func fitWidths(widths map[int]int, minWidths []int, width int) map[int]int {
	if width <= 0 || len(widths) == 0 {
		return widths
	}
	sum := 0
	for _, w := range widths {
		sum += w
	}
	room := width - tableBorder(len(minWidths))
	if sum <= room || room <= 0 {
		return widths
	}
	out := make(map[int]int, len(widths))
	least := make(map[int]int, len(widths))
	total := 0
	for col, w := range widths {
		least[col] = 3
		if col < len(minWidths) {
			least[col] = max(least[col], minWidths[col]+cellPadding)
		}
		out[col] = min(w, max(least[col], w*room/sum))
		total += out[col]
	}
	// The floors of the columns that cannot narrow further may push the
	// sum past the room: take the rest from the widest column that can
	// give, one column at a time (at most sum steps).
	for total > room {
		widest := -1
		for col, w := range out {
			if w > least[col] && (widest < 0 || w > out[widest] || w == out[widest] && col < widest) {
				widest = col
			}
		}
		if widest < 0 {
			break // every column at its longest word: as narrow as it gets
		}
		out[widest]--
		total--
	}
	return out
}

// Append adds a row.
func (t *Table) Append(cells ...string) error {
	t.rows = append(t.rows, cells)
	return nil
}

// Render draws the table (or writes its tab-separated lines).
func (t *Table) Render() error {
	if t.opt.Terminal {
		return t.draw()
	}
	var b strings.Builder
	for _, row := range t.rows {
		for i, c := range row {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(tsvCell.Replace(c))
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// draw renders the bordered table for a terminal.
func (t *Table) draw() error {
	var opts []tablewriter.Option
	if t.opt.Wrap {
		opts = append(opts, tablewriter.WithRowAutoWrap(tw.WrapNormal))
	}
	if widths := fitWidths(t.opt.Widths, t.longestWords(), t.opt.Width); len(widths) > 0 {
		m := tw.NewMapper[int, int]()
		for col, width := range widths {
			m.Set(col, width)
		}
		opts = append(opts, tablewriter.WithColumnWidths(m))
	}
	tt := tablewriter.NewTable(t.w, opts...)
	tt.Header(toAny(t.header)...)
	for _, row := range t.rows {
		if err := tt.Append(toAny(row)...); err != nil {
			return err
		}
	}
	return tt.Render()
}

// longestWords is, per column, the width of its longest word (header
// included): the narrowest the column can wrap to.
func (t *Table) longestWords() []int {
	out := make([]int, len(t.header))
	see := func(col int, cell string) {
		if col >= len(out) {
			return
		}
		for _, word := range strings.Fields(cell) {
			out[col] = max(out[col], utf8.RuneCountInString(stripANSI(word)))
		}
	}
	for i, h := range t.header {
		see(i, h)
	}
	for _, row := range t.rows {
		for i, c := range row {
			see(i, c)
		}
	}
	return out
}

// stripANSI drops colour escapes (ESC [ ... m) from a cell's text.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && s[j] != 'm' {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// tsvCell keeps a cell on its line and in its column.
var tsvCell = strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ")

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Paint returns a colour for one stream: attrs when on, plain otherwise.
func Paint(on bool, attrs ...color.Attribute) *color.Color { return paint(on, attrs...) }

// PaintString is s in the attributes when on, else s as it is.
func PaintString(on bool, s string, attrs ...color.Attribute) string {
	if !on {
		return s
	}
	return paint(true, attrs...).Sprint(s)
}
