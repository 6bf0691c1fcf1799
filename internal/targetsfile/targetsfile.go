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
	"maps"
	"sort"
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

// target reads one entry of targets:, the defaults applied.
func (p *targetsParser) target(e *yaml.Node) (FileEntry, error) {
	// The defaults' map itself until the entry sets a key of its own
	// (a map an entry was ~400 bytes of 100,000 entries' peak).
	t := FileEntry{Line: e.Line, Recover: p.defaultRecover, Probe: p.defaults}
	if e.Kind != yaml.MappingNode {
		return t, p.fail(e.Line, "", "a target must be a mapping with name: and url:")
	}
	epairs, err := pairs(e)
	if err != nil {
		return t, p.fail(e.Line, "", "%v", err)
	}
	// The name first, so every other error can name the target.
	if t.Name, err = p.name(e, epairs); err != nil {
		return t, err
	}
	for i, kv := range epairs {
		k, v := kv[0], kv[1]
		// A key given twice, by a look back: an entry has a handful
		// (a set of them was a map a target).
		for _, before := range epairs[:i] {
			if before[0].Value == k.Value {
				return t, p.fail(k.Line, t.Name, "%s: given twice", k.Value)
			}
		}
		if err := p.targetKey(&t, k, v); err != nil {
			return t, err
		}
	}
	return t, nil
}

// name reads an entry's name: and checks that it is new.
func (p *targetsParser) name(e *yaml.Node, epairs [][2]*yaml.Node) (string, error) {
	name, hasName := "", false
	for _, kv := range epairs {
		if kv[0].Value == "name" {
			nv := kv[1]
			if nv.Kind != yaml.ScalarNode || nv.Tag == "!!null" || nv.Value == "" {
				return "", p.fail(nv.Line, "", "name: want a non-empty string")
			}
			name, hasName = nv.Value, true
		}
	}
	if !hasName {
		return "", p.fail(e.Line, "", "a target without name: (names are identity in the state and the metrics)")
	}
	if prev, dup := p.names[name]; dup {
		return "", p.fail(e.Line, name, "duplicate name (first at line %d)", prev)
	}
	p.names[name] = e.Line
	return name, nil
}

// targetKey reads one key of an entry into t.
func (p *targetsParser) targetKey(t *FileEntry, k, v *yaml.Node) error {
	switch k.Value {
	case "name":
	case "url":
		s, err := stringValue(v)
		if err != nil {
			return p.fail(v.Line, t.Name, "url: %v", err)
		}
		t.URL, t.URLLine = s, v.Line
	case "started_at":
		s, err := stringValue(v)
		if err != nil {
			return p.fail(v.Line, t.Name, "started_at: %v", err)
		}
		// The sanity check first: it says "milliseconds?" more plainly
		// than the parser's year range does.
		if err := saneDigits(s); err != nil {
			return p.fail(v.Line, t.Name, "started_at: %q: %v", s, err)
		}
		if t.StartedAt, err = target.ParseTime(s); err != nil {
			return p.fail(v.Line, t.Name, "started_at: %q: %v", s, err)
		}
		if err := saneStart(s, t.StartedAt, now()); err != nil {
			return p.fail(v.Line, t.Name, "started_at: %q: %v", s, err)
		}
	case "recover":
		b, err := boolValue(v)
		if err != nil {
			return p.fail(v.Line, t.Name, "recover: %v", err)
		}
		t.Recover = b
	default:
		val, err := probeValue(k, v)
		if err != nil {
			return p.fail(k.Line, t.Name, "%v", err)
		}
		if !t.ownProbe {
			t.Probe = make(map[string]Value, len(p.defaults)+1)
			maps.Copy(t.Probe, p.defaults)
			t.ownProbe = true
		}
		t.Probe[k.Value] = val
	}
	return nil
}

// now is the clock that judges a started_at "far in the future".
var now = time.Now

// FutureSlack is how far in the future a started_at may be (clock skew
// between the deploying machine and this one); past it, it is an error: the
// target would sit inside its grace window until then.
const FutureSlack = time.Hour

// saneStart checks a started_at where it enters, so one target can never
// make the state unsavable (time.Time's JSON stops at year 9999) nor hide
// inside a grace window that never ends.
func saneStart(raw string, t, now time.Time) error {
	if err := saneDigits(raw); err != nil {
		return err
	}
	switch {
	case t.Year() > 9999:
		return fmt.Errorf("year %d: want a year up to 9999", t.Year())
	case t.Year() < 1970:
		return fmt.Errorf("year %d: before 1970", t.Year())
	case t.After(now.Add(FutureSlack)):
		ahead := t.Sub(now).Round(time.Minute).String()
		if d := t.Sub(now); d > 48*time.Hour {
			ahead = fmt.Sprintf("%d days", d/(24*time.Hour))
		}
		return fmt.Errorf("%s is %s in the future: the target would stay inside its grace window until then",
			t.UTC().Format(time.RFC3339), ahead)
	}
	return nil
}

// saneDigits refuses unix times of 12 digits or more: milliseconds (or
// smaller units) where seconds are meant.
func saneDigits(raw string) error {
	raw = strings.TrimSpace(raw)
	if raw != "" && strings.Trim(raw, "0123456789") == "" && len(raw) >= 12 {
		return fmt.Errorf("%d digits: milliseconds or smaller units? want unix seconds (10 digits today)", len(raw))
	}
	return nil
}

// deref follows aliases (*name) to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// pairs returns a mapping's key/value pairs with aliases followed and merge
// keys (<<: *base, <<: [*a, *b]) resolved as YAML 1.1 defines them: the
// mapping's own keys win over merged ones, and earlier merged mappings over
// later ones. Duplicate own keys are kept (the caller reports them).
func pairs(m *yaml.Node) ([][2]*yaml.Node, error) {
	return pairsDepth(m, 0)
}

func pairsDepth(m *yaml.Node, depth int) ([][2]*yaml.Node, error) {
	if depth > 16 {
		return nil, errors.New("merge keys (<<) nested too deep")
	}
	own := make([][2]*yaml.Node, 0, len(m.Content)/2)
	var merged [][2]*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], deref(m.Content[i+1])
		if k.Tag != "!!merge" {
			own = append(own, [2]*yaml.Node{deref(k), v})
			continue
		}
		srcs := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			srcs = v.Content
		}
		for _, src := range srcs {
			src = deref(src)
			if src.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: <<: want a mapping or a list of mappings to merge", k.Line)
			}
			p, err := pairsDepth(src, depth+1)
			if err != nil {
				return nil, err
			}
			merged = append(merged, p...)
		}
	}
	if len(merged) == 0 {
		return own, nil // most mappings merge nothing: no set of keys to build
	}
	have := make(map[string]bool, len(own))
	for _, kv := range own {
		have[kv[0].Value] = true
	}
	for _, kv := range merged {
		if !have[kv[0].Value] {
			have[kv[0].Value] = true
			own = append(own, kv)
		}
	}
	return own, nil
}

// probeValue checks one probe key and its value's type.
func probeValue(k, v *yaml.Node) (Value, error) {
	v = deref(v)
	kind, ok := ProbeKeys()[k.Value]
	if !ok {
		return Value{}, fmt.Errorf("unknown key %q (want name, url, started_at, recover or one of: %s)", k.Value, strings.Join(probeKeyNames(), ", "))
	}
	val := Value{Line: k.Line}
	switch kind {
	case KindList:
		if v.Kind == yaml.SequenceNode {
			for _, e := range v.Content {
				s, err := stringValue(deref(e))
				if err != nil {
					return Value{}, fmt.Errorf("%s: each item: %v", k.Value, err)
				}
				val.Strings = append(val.Strings, s)
			}
			return val, nil
		}
		s, err := stringValue(v)
		if err != nil {
			return Value{}, fmt.Errorf("%s: want a string or a list of strings", k.Value)
		}
		val.Strings = []string{s}
	case KindString:
		s, err := stringValue(v)
		if err != nil {
			return Value{}, fmt.Errorf("%s: %v", k.Value, err)
		}
		val.Strings = []string{s}
	case KindBool:
		b, err := boolValue(v)
		if err != nil {
			return Value{}, fmt.Errorf("%s: %v", k.Value, err)
		}
		val.Strings = []string{strconv.FormatBool(b)}
	case KindInt:
		if v.Kind != yaml.ScalarNode || v.Tag != "!!int" {
			return Value{}, fmt.Errorf("%s: want an integer", k.Value)
		}
		val.Strings = []string{v.Value}
	}
	return val, nil
}

func probeKeyNames() []string {
	names := make([]string, 0, len(ProbeKeys()))
	for k := range ProbeKeys() {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// stringValue accepts a scalar (a number or a time written bare is taken as
// written: `expect_status: 200`, `started_at: 1700000000`).
func stringValue(v *yaml.Node) (string, error) {
	v = deref(v)
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return "", errors.New("want a string")
	}
	return v.Value, nil
}

func boolValue(v *yaml.Node) (bool, error) {
	v = deref(v)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
		return false, errors.New("want true or false")
	}
	var b bool
	if err := v.Decode(&b); err != nil {
		return false, errors.New("want true or false")
	}
	return b, nil
}
