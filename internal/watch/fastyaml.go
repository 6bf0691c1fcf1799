package watch

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// fastYAML builds the node tree yaml.v3 would build for a targets file in
// the plainest block style — what a generator writes, and most people:
//
//	targets:
//	  - name: api
//	    url: http://10.0.0.1:8080/health
//	    headers:
//	      - X-Probe:1
//
// and reports false for anything else, which yaml.v3 then reads: a comment,
// a quote, a tab, a byte outside printable ASCII, a flow collection, an
// anchor, alias or tag, a block or multi-line scalar, an empty value, a
// document marker, a key that is not a plain word, a value that is not
// plainly a scalar. Within that subset each line is one key or one list
// item and the structure is the indentation alone, so the tree (kinds,
// values, tags as yaml.v3 resolves them, lines and columns) is yaml.v3's;
// fastyaml_test.go checks it against yaml.v3 over generated and fuzzed
// files. yaml.v3 takes ~6 µs a target; this, a tenth of that: the part of a
// 10,000-target --once run that no other core can share.
func fastYAML(data []byte) (*yaml.Node, bool) {
	for _, c := range data {
		if c == '\n' {
			continue
		}
		if c < ' ' || c > '~' || c == '#' || c == '"' || c == '\'' || c == '\\' {
			return nil, false
		}
	}
	// The nodes are allocated in blocks (a node each was most of the
	// cost). Each value is its own copy, not a substring of the file's
	// text: a target's name lives on as a key of the state for the whole
	// of a long-running watch, and would pin the whole file of each SIGHUP
	// reload that added one.
	f := &fastParser{text: string(data)}
	// Room for every line at once (10,000 targets are 20,000 lines and
	// more): growing the list was a tenth of the parse.
	f.lines = make([]fastLine, 0, strings.Count(f.text, "\n")+1)
	for n, start := 1, 0; start < len(f.text); n++ {
		end := strings.IndexByte(f.text[start:], '\n')
		if end < 0 {
			end = len(f.text)
		} else {
			end += start
		}
		if end > start {
			l := f.text[start:end]
			ind := 0
			for ind < len(l) && l[ind] == ' ' {
				ind++
			}
			if ind == len(l) || l[len(l)-1] == ' ' {
				return nil, false // blank but for spaces, or a trailing space
			}
			f.lines = append(f.lines, fastLine{n: n, indent: ind, text: l[ind:]})
		}
		start = end + 1
	}
	if len(f.lines) == 0 || f.lines[0].indent != 0 {
		return nil, false
	}
	root, ok := f.block(0, 0)
	if !ok || f.i != len(f.lines) || root.Kind != yaml.MappingNode {
		return nil, false
	}
	return root, true
}

// fastLine is one line that is not empty: its number, its indentation
// and the rest.
type fastLine struct {
	n, indent int
	text      string
}

type fastParser struct {
	text  string
	lines []fastLine
	i     int
	nodes []yaml.Node
}

// node is a new node, from the current block.
func (f *fastParser) node(kind yaml.Kind, line, col int) *yaml.Node {
	if len(f.nodes) == 0 {
		f.nodes = make([]yaml.Node, 512)
	}
	n := &f.nodes[0]
	f.nodes = f.nodes[1:]
	n.Kind, n.Line, n.Column = kind, line, col
	return n
}

// fastMaxDepth bounds the nesting the fast path reads (a targets file
// needs 4: root, targets, entry, headers).
const fastMaxDepth = 8

// block reads the mapping or the list that starts at the current line,
// indented indent.
func (f *fastParser) block(indent, depth int) (*yaml.Node, bool) {
	if depth > fastMaxDepth || f.i >= len(f.lines) || f.lines[f.i].indent != indent {
		return nil, false
	}
	if isItem(f.lines[f.i].text) {
		return f.list(indent, depth)
	}
	l := f.lines[f.i]
	return f.mapping(l.text, l.n, indent, depth)
}

// isItem says a line's text is a list item ("- " and something).
func isItem(t string) bool { return len(t) > 2 && t[0] == '-' && t[1] == ' ' }

// list reads the list items indented indent.
func (f *fastParser) list(indent, depth int) (*yaml.Node, bool) {
	first := f.lines[f.i]
	seq := f.node(yaml.SequenceNode, first.n, indent+1)
	seq.Tag = "!!seq"
	for f.i < len(f.lines) {
		l := f.lines[f.i]
		if l.indent < indent || (l.indent == indent && !isItem(l.text)) {
			break
		}
		if l.indent != indent {
			return nil, false
		}
		rest, col := l.text[2:], indent+3
		if rest[0] == ' ' {
			return nil, false
		}
		var item *yaml.Node
		var ok bool
		if _, _, isKey := splitKey(rest); isKey {
			// "- key: ..." opens a mapping whose keys are in rest's column.
			item, ok = f.mapping(rest, l.n, col-1, depth+1)
		} else {
			item, ok = f.scalar(rest, l.n, col)
			f.i++
		}
		if !ok {
			return nil, false
		}
		seq.Content = append(seq.Content, item)
	}
	return seq, true
}

// mapping reads a mapping whose first key is text (on line n), its keys
// indented indent: the following lines at that indentation that are keys.
func (f *fastParser) mapping(text string, n, indent, depth int) (*yaml.Node, bool) {
	m := f.node(yaml.MappingNode, n, indent+1)
	m.Tag = "!!map"
	// Room for two keys and their values, a target's name: and url:, in
	// one allocation (appending grew it twice).
	m.Content = make([]*yaml.Node, 0, 4)
	for {
		key, val, isKey := splitKey(text)
		if !isKey {
			return nil, false
		}
		k, ok := f.scalar(key, n, indent+1)
		if !ok {
			return nil, false
		}
		f.i++
		var v *yaml.Node
		if val != "" {
			if v, ok = f.scalar(val, n, indent+len(key)+3); !ok {
				return nil, false
			}
		} else {
			// "key:" and the value below: a block more indented, or a
			// list at the key's own indentation (YAML allows both).
			if f.i >= len(f.lines) {
				return nil, false
			}
			next := f.lines[f.i]
			switch {
			case next.indent > indent:
				v, ok = f.block(next.indent, depth+1)
			case next.indent == indent && isItem(next.text):
				v, ok = f.list(indent, depth+1)
			default:
				ok = false // an empty value: yaml.v3 says what it is
			}
			if !ok {
				return nil, false
			}
		}
		m.Content = append(m.Content, k, v)
		if f.i >= len(f.lines) {
			return m, true
		}
		l := f.lines[f.i]
		if l.indent < indent || (l.indent == indent && isItem(l.text)) {
			return m, true
		}
		if l.indent > indent {
			return nil, false
		}
		text, n = l.text, l.n
	}
}

// splitKey splits "key: value" or "key:" (value "") where key is a plain
// word; isKey is false for anything else.
func splitKey(t string) (key, val string, isKey bool) {
	i := 0
	for i < len(t) && (t[i] >= 'a' && t[i] <= 'z' || t[i] >= 'A' && t[i] <= 'Z' || t[i] == '_' ||
		i > 0 && (t[i] >= '0' && t[i] <= '9' || t[i] == '-')) {
		i++
	}
	if i == 0 || i == len(t) || t[i] != ':' {
		return "", "", false
	}
	if i+1 == len(t) {
		return t[:i], "", true
	}
	if t[i+1] != ' ' || i+2 == len(t) || t[i+2] == ' ' {
		return "", "", false
	}
	return t[:i], t[i+2:], true
}

// scalar is a plain scalar at line n, column col, with yaml.v3's tag; false
// when the text may not be one plain scalar in block context.
func (f *fastParser) scalar(t string, n, col int) (*yaml.Node, bool) {
	if len(t) == 0 {
		return nil, false
	}
	switch t[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '%', '@', '`', '<', '=', '~':
		return nil, false
	}
	if t[len(t)-1] == ':' || strings.Contains(t, ": ") || strings.HasPrefix(t, "...") {
		return nil, false
	}
	s := f.node(yaml.ScalarNode, n, col)
	s.Value = strings.Clone(t) // see fastYAML
	if c := t[0]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '_' {
		if !strings.ContainsRune("yYnNtTfFoO", rune(c)) {
			// yaml.v3 resolves only scalars that begin with a digit, a
			// sign, a dot, "~" or one of these letters.
			s.Tag = "!!str"
			return s, true
		}
	}
	s.Tag = s.ShortTag() // yaml.v3's own resolution of a plain scalar
	return s, true
}
