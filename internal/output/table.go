package output

import (
	"io"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// TableOptions shape a table: fixed column widths (by column index) and
// whether long cells wrap within them.
type TableOptions struct {
	Widths map[int]int
	Wrap   bool
}

// Table is the one table primitive every command draws with, so how a
// table looks (and where it goes) is decided in one place.
type Table struct {
	t    *tablewriter.Table
	rows int
}

// NewTable starts a table with its header row.
func NewTable(w io.Writer, opt TableOptions, header ...string) *Table {
	var opts []tablewriter.Option
	if opt.Wrap {
		opts = append(opts, tablewriter.WithRowAutoWrap(tw.WrapNormal))
	}
	if len(opt.Widths) > 0 {
		m := tw.NewMapper[int, int]()
		for col, width := range opt.Widths {
			m.Set(col, width)
		}
		opts = append(opts, tablewriter.WithColumnWidths(m))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(toAny(header)...)
	return &Table{t: t}
}

// Append adds a row.
func (t *Table) Append(cells ...string) error {
	t.rows++
	return t.t.Append(toAny(cells)...)
}

// Rows is the number of rows appended.
func (t *Table) Rows() int { return t.rows }

// Render draws the table.
func (t *Table) Render() error { return t.t.Render() }

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Paint returns a colour for one stream: attrs when on, plain otherwise.
func Paint(on bool, attrs ...color.Attribute) *color.Color { return paint(on, attrs...) }
