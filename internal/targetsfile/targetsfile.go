// Package targetsfile reads watch's --targets file: yaml.v3's node tree
// (every shape alike: block or flow, anchors, aliases and merge keys within
// yamlsafe's budget), a large file a slice of its entries at a time, every
// error naming the file, the line and the target.
package targetsfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/target"
	"github.com/healthctl/healthctl/internal/yamlsafe"
)

// Kind is the type a targets-file key wants.
type Kind int

// The kinds of targets-file values.
const (
	KindString Kind = iota
	KindBool
	KindInt
	// KindList is a list of strings; a single string is a list of one.
	KindList
)

// ProbeKeys are the targets-file keys that set probe options, with their
// kinds, derived from target.Options: each mirrors the probe flag of the
// same name, with '-' written '_' (`expect_status` is --expect-status),
// except `headers` (-H, a list). Durations and sizes are strings here and
// parsed by their option. Built when a targets file is first read, not at
// start-up (which every probe pays).
var ProbeKeys = sync.OnceValue(func() map[string]Kind {
	m := make(map[string]Kind, len(target.Options))
	for i := range target.Options {
		o := &target.Options[i]
		k := KindString
		switch o.Kind {
		case target.Bool:
			k = KindBool
		case target.Int:
			k = KindInt
		case target.List:
			k = KindList
		}
		m[o.Key()] = k
	}
	return m
})

// Value is one probe key's value from the targets file, with where it was.
type Value struct {
	// Strings holds the value: one element for a scalar, any number for a
	// list. Booleans and integers are kept as written ("true", "3").
	Strings []string
	Line    int
}

// Str returns a scalar value.
func (v Value) Str() string {
	if len(v.Strings) == 0 {
		return ""
	}
	return v.Strings[0]
}

// FileEntry is one entry of the targets file, with the defaults applied.
type FileEntry struct {
	Name string
	// URL is empty for a target without one (reason no_url).
	URL string
	// Line is the line of the entry (its first key); URLLine that of url:.
	Line, URLLine int
	// StartedAt is the target's start (zero: unknown).
	StartedAt time.Time
	// Recover is false for `recover: false`: the decision is made, the hook
	// never runs.
	Recover bool
	// Probe holds the probe keys set by `defaults:` or the entry (the entry's
	// value replaces the default's), by key: read only (an entry that sets
	// none shares the defaults' map).
	Probe map[string]Value
	// ownProbe: Probe is the entry's own map, not the defaults'.
	ownProbe bool
}

// TargetsError is bad input in a targets file: it names the file, the line
// and, when known, the target.
type TargetsError struct {
	File   string
	Line   int
	Target string
	Err    error
	// Unreadable: the file could not be read (missing, not a regular
	// file, too big, no permission); the caller names where its path
	// came from.
	Unreadable bool
}

func (e *TargetsError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Target != "" {
		loc += ": target " + strconv.Quote(e.Target)
	}
	return loc + ": " + e.Err.Error()
}

func (e *TargetsError) Unwrap() error { return e.Err }

// Source names where a probe key of target came from, for error lines:
// `targets.yaml:12: target "api": expect_status`.
func Source(file string, t *FileEntry, key string) string {
	line := t.Line
	if v, ok := t.Probe[key]; ok {
		line = v.Line
	}
	return fmt.Sprintf("%s:%d: target %q: %s", file, line, t.Name, key)
}

// ReadTargets reads and checks a targets file:
//
//	defaults:            # optional: probe keys for every target
//	  expect_status: 2xx
//	targets:
//	  - name: api        # required, unique
//	    url: https://api.example/health   # optional: none is reason no_url
//	    started_at: 2026-01-02T15:04:05Z # optional: RFC 3339 or unix seconds
//	    recover: false   # optional: decide, never run the hook
//	    headers: ["Authorization: Bearer x"]
//
// Unknown keys, wrong types and duplicate names are errors naming the line.
// The file must be a regular file (a FIFO is refused at once) within
// inputfile.Targets' cap, and its aliases and merge keys within yamlsafe's
// budget (a merge bomb is refused in milliseconds, on start as on SIGHUP).
func ReadTargets(path string) ([]FileEntry, error) {
	data, err := inputfile.Read(path, inputfile.Targets)
	if err != nil {
		// The error without the path (TargetsError names the file once):
		// "targets.yaml: no such file or directory", not "targets.yaml:
		// open targets.yaml: no such file or directory".
		return nil, &TargetsError{File: path, Err: inputfile.Cause(err), Unreadable: true}
	}
	return ParseTargets(path, data)
}

// Count is about how many targets the file holds (its name: keys), 0
// when it cannot be read (reading it for real then says why).
func Count(path string) int {
	data, err := inputfile.Read(path, inputfile.Targets)
	if err != nil {
		return 0
	}
	return bytes.Count(data, []byte("name:"))
}

// ParseTargets is ReadTargets on data already read.
func ParseTargets(path string, data []byte) ([]FileEntry, error) {
	if out, ok := parseSliced(path, data, sliceFrom, sliceItems); ok {
		return out, nil
	}
	return parseWhole(path, data)
}

// parseWhole is ParseTargets on the whole document at once.
func parseWhole(path string, data []byte) ([]FileEntry, error) {
	p := &targetsParser{path: path, names: map[string]int{}, defaultRecover: true}
	root, err := p.document(data)
	if err != nil {
		return nil, err
	}
	list, err := p.top(root)
	if err != nil {
		return nil, err
	}
	// Each entry's node is let go once read, so that the collector can
	// take the tree as the entries replace it (100,000 entries held beside
	// the whole tree were the run's largest live heap) — unless the file
	// can hold an anchor (&), whose node a later alias may still reach.
	release := bytes.IndexByte(data, '&') < 0
	out := make([]FileEntry, 0, len(list.Content))
	for i, e := range list.Content {
		t, err := p.target(deref(e))
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if release {
			list.Content[i] = nil
		}
	}
	return out, nil
}

// targetsParser reads one targets file: what `defaults:` set, and the
// names seen so far (each with its line).
type targetsParser struct {
	path           string
	defaults       map[string]Value
	defaultRecover bool
	names          map[string]int
}

func (p *targetsParser) fail(line int, target string, format string, args ...any) error {
	return &TargetsError{File: p.path, Line: line, Target: target, Err: fmt.Errorf(format, args...)}
}

// yamlErr is a YAML library error as one short line.
func yamlErr(err error) string {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	return strings.TrimPrefix(msg, "yaml: ")
}

// document decodes the file's one YAML document and returns its root
// mapping. A second document (after ---) would be ignored by a plain
// Unmarshal, garbage included: it is an error.
func (p *targetsParser) document(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, p.fail(0, "", "%s", yamlErr(err))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, p.fail(0, "", "empty: want a targets: list")
	}
	if err := yamlsafe.Check(&doc); err != nil {
		return nil, p.fail(0, "", "%v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, p.fail(0, "", "several YAML documents (the second does not parse: %s): want one", yamlErr(err))
		}
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		return nil, p.fail(line, "", "a second YAML document (after ---): want one document with defaults: and targets:")
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, p.fail(root.Line, "", "want a mapping with defaults: and targets:")
	}
	return root, nil
}

// top reads the root's keys: defaults: (into p) and targets:, returned.
func (p *targetsParser) top(root *yaml.Node) (*yaml.Node, error) {
	rootPairs, err := pairs(root)
	if err != nil {
		return nil, p.fail(root.Line, "", "%v", err)
	}
	var list *yaml.Node
	seen := map[string]bool{}
	for _, kv := range rootPairs {
		k, v := kv[0], kv[1]
		if seen[k.Value] {
			return nil, p.fail(k.Line, "", "%s: given twice", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "defaults":
			if err := p.readDefaults(v); err != nil {
				return nil, err
			}
		case "targets":
			if v.Kind != yaml.SequenceNode {
				return nil, p.fail(v.Line, "", "targets: want a list of targets")
			}
			list = v
		default:
			return nil, p.fail(k.Line, "", "unknown key %q (want defaults or targets)", k.Value)
		}
	}
	if list == nil {
		return nil, p.fail(root.Line, "", "no targets: list")
	}
	return list, nil
}

// readDefaults reads defaults: the probe keys and recover: every target
// starts from.
func (p *targetsParser) readDefaults(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return p.fail(v.Line, "", "defaults: want a mapping of probe keys")
	}
	p.defaults = map[string]Value{}
	dpairs, err := pairs(v)
	if err != nil {
		return p.fail(v.Line, "", "defaults: %v", err)
	}
	for _, kv := range dpairs {
		dk, dv := kv[0], kv[1]
		if dk.Value == "recover" {
			b, err := boolValue(dv)
			if err != nil {
				return p.fail(dv.Line, "", "defaults: recover: %v", err)
			}
			p.defaultRecover = b
			continue
		}
		val, err := probeValue(dk, dv)
		if err != nil {
			return p.fail(dk.Line, "", "defaults: %v", err)
		}
		if _, dup := p.defaults[dk.Value]; dup {
			return p.fail(dk.Line, "", "defaults: %s: given twice", dk.Value)
		}
		p.defaults[dk.Value] = val
	}
	return nil
}
