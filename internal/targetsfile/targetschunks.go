package targetsfile

import (
	"bytes"
	"runtime"
	"sync/atomic"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/crash"
)

// A big targets file is read a slice of its targets: list at a time: the
// YAML library builds the whole document's tree before it returns it
// (~2 KiB a target with two headers of its own: 100,000 such entries
// peaked at 239 MB of live heap while the file was read, past the sweep's
// own peak), where a slice of sliceItems entries is a few MB; and the
// slices are parsed on every core at once. The slices
// are cut at the lines that start an entry of the list (its indentation,
// then "- "), which in a file that parses are always an entry's start.
// Whatever the cut cannot vouch for (anchors, aliases, tags, several
// documents, tabs, CR line ends, a targets: that is not a plain block
// list) is read whole, and so is any file the slices find an error in,
// so that every error is the one the whole document gives.
const (
	sliceFrom  = 256 << 10 // files smaller than this are read whole (~2,000 entries: two slices)
	sliceItems = 1000      // entries a slice
)

// unsliceable reports what the cut cannot vouch for: an anchor, alias or
// tag where a token starts, a document marker or directive at a line's
// start. (A byte loop: a regular expression took as long as the YAML.)
func unsliceable(data []byte) bool {
	for i, c := range data {
		lineStart := i == 0 || data[i-1] == '\n'
		switch {
		case c == '&' || c == '*' || c == '!':
			if (lineStart || bytes.IndexByte([]byte(" [{,"), data[i-1]) >= 0) &&
				i+1 < len(data) && bytes.IndexByte([]byte(" \n,]}"), data[i+1]) < 0 {
				return true
			}
		case lineStart && (c == '%' || bytes.HasPrefix(data[i:], []byte("---")) || bytes.HasPrefix(data[i:], []byte("..."))):
			return true
		}
	}
	return false
}

// parseSliced is ParseTargets `items` entries at a time; ok is false when
// data is not read this way (smaller than from, a shape the cut cannot
// vouch for, or an error anywhere: the whole read says it).
func parseSliced(path string, data []byte, from, items int) (out []FileEntry, ok bool) {
	if len(data) < from || bytes.ContainsAny(data, "\r\t\x00") || !bytes.HasSuffix(data, []byte("\n")) ||
		(len(data) > 0 && data[0] >= 0x80) || unsliceable(data) {
		return nil, false
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty piece after the last "\n"
	// The one targets: line at the left edge, its list in block style.
	tl := -1
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte("targets")) {
			if tl >= 0 || !isTargetsLine(l) {
				return nil, false
			}
			tl = i
		}
	}
	if tl < 0 {
		return nil, false
	}
	// The entries: lines from the first "- " after it, at its indentation
	// k, to the first line (not blank, not a comment) left of k or at k
	// without "- ".
	k, first, end := -1, -1, len(lines)
	var starts []int
	for i := tl + 1; i < len(lines); i++ {
		l := lines[i]
		ind := indent(l)
		if blankOrComment(l[ind:]) {
			continue
		}
		if k < 0 {
			if !itemStart(l[ind:]) {
				return nil, false // a flow list, or no list
			}
			k, first = ind, i
		}
		if ind > k {
			continue
		}
		if ind < k || !itemStart(l[ind:]) {
			if ind == k && l[ind] == '-' {
				return nil, false
			}
			end = i
			break
		}
		starts = append(starts, i)
	}
	if len(starts) == 0 {
		return nil, false
	}
	// The rest of the file, the entries' lines blanked (line numbers
	// kept) and the list written empty: defaults:, and every check of the
	// document and its top keys.
	var rest bytes.Buffer
	rest.Grow(len(data) / 8)
	for i, l := range lines {
		switch {
		case i == tl:
			rest.WriteString("targets: []\n")
		case i >= first && i < end:
			rest.WriteByte('\n')
		default:
			rest.Write(l)
		}
	}
	p := &targetsParser{path: path, names: map[string]int{}, defaultRecover: true}
	root, err := p.document(rest.Bytes())
	if err != nil {
		return nil, false
	}
	list, err := p.top(root)
	if err != nil || list.Line != tl+1 || len(list.Content) != 0 {
		return nil, false
	}
	out = make([]FileEntry, 0, len(starts))
	all := parseSlices(len(starts), items, func(c int, n *yaml.Node) bool {
		// The slice of entries c.., its lines from the file's: on any
		// core, while the entries before it are made targets.
		from, to := starts[c], end
		if c+items < len(starts) {
			to = starts[c+items]
		}
		size := len("targets:\n")
		for _, l := range lines[from:to] {
			size += len(l)
		}
		var doc bytes.Buffer
		doc.Grow(size)
		doc.WriteString("targets:\n")
		for _, l := range lines[from:to] {
			doc.Write(l)
		}
		if err := yaml.Unmarshal(doc.Bytes(), n); err != nil || len(n.Content) != 1 {
			return false
		}
		m := n.Content[0]
		if m.Kind != yaml.MappingNode || len(m.Content) != 2 || m.Content[1].Kind != yaml.SequenceNode ||
			len(m.Content[1].Content) != min(items, len(starts)-c) {
			return false
		}
		// Line 2 of the slice is the file's line from+1.
		shiftLines(m.Content[1], from-1)
		return true
	}, func(n *yaml.Node) bool {
		// In the file's order: the first of two entries of one name is
		// the one a duplicate is said against.
		for _, e := range n.Content[0].Content[1].Content {
			t, err := p.target(e)
			if err != nil {
				return false
			}
			out = append(out, t)
		}
		return true
	})
	if !all {
		return nil, false
	}
	return out, true
}

// parseSlices parses the slices of `count` entries, `items` a slice, with
// parse on every core, and hands each parsed slice to use in order; it
// stops at the first that fails, and reports whether all were used. At
// most one more slice than there are cores is parsed ahead of use: the
// trees it keeps are a few slices' (a slice a thousand entries for
// memory), not the file's.
func parseSlices(count, items int, parse func(c int, n *yaml.Node) bool, use func(n *yaml.Node) bool) bool {
	slices := (count + items - 1) / items
	workers := min(runtime.GOMAXPROCS(0), slices)
	type parsed struct {
		n    yaml.Node
		ok   bool
		done chan struct{}
	}
	ps := make([]parsed, slices)
	for i := range ps {
		ps[i].done = make(chan struct{})
	}
	ahead := make(chan struct{}, workers+1) // parsed, not yet used
	stop := make(chan struct{})
	defer close(stop)
	var next atomic.Int64
	for range workers {
		crash.Go(func() {
			for {
				select {
				case ahead <- struct{}{}:
				case <-stop:
					return
				}
				i := int(next.Add(1)) - 1
				if i >= slices {
					return
				}
				ps[i].ok = parse(i*items, &ps[i].n)
				close(ps[i].done)
			}
		})
	}
	for i := range ps {
		<-ps[i].done
		if !ps[i].ok || !use(&ps[i].n) {
			return false
		}
		ps[i].n = yaml.Node{} // its tree goes
		<-ahead
	}
	return true
}

// isTargetsLine: "targets:" with nothing after it but blanks or a comment.
func isTargetsLine(l []byte) bool {
	rest, ok := bytes.CutPrefix(l, []byte("targets:"))
	if !ok {
		return false
	}
	if len(rest) == 0 || rest[0] == '\n' {
		return true
	}
	// A comment needs a blank before its #.
	rest = bytes.TrimLeft(rest, " ")
	return len(rest) < len(l)-len("targets:") && (rest[0] == '\n' || rest[0] == '#')
}

func indent(l []byte) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

func blankOrComment(l []byte) bool { return len(l) == 0 || l[0] == '\n' || l[0] == '#' }

// itemStart: "- " or a lone "-" (an entry's start).
func itemStart(l []byte) bool {
	return len(l) >= 2 && l[0] == '-' && (l[1] == ' ' || l[1] == '\n')
}

// shiftLines moves the lines of n and all below it by d.
func shiftLines(n *yaml.Node, d int) {
	n.Line += d
	for _, c := range n.Content {
		shiftLines(c, d)
	}
}
