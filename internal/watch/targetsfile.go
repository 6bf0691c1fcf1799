package watch

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/target"
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
// parsed by their option.
var ProbeKeys = func() map[string]Kind {
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
}()

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

// FileTarget is one entry of the targets file, with the defaults applied.
type FileTarget struct {
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
	// value replaces the default's), by key.
	Probe map[string]Value
}

// TargetsError is bad input in a targets file: it names the file, the line
// and, when known, the target.
type TargetsError struct {
	File   string
	Line   int
	Target string
	Err    error
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
func Source(file string, t *FileTarget, key string) string {
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
func ReadTargets(path string) ([]FileTarget, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &TargetsError{File: path, Err: err}
	}
	return ParseTargets(path, data)
}

// ParseTargets is ReadTargets on data already read.
func ParseTargets(path string, data []byte) ([]FileTarget, error) {
	fail := func(line int, target string, format string, args ...any) error {
		return &TargetsError{File: path, Line: line, Target: target, Err: fmt.Errorf(format, args...)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		var te *yaml.TypeError
		msg := err.Error()
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg = te.Errors[0]
		}
		return nil, fail(0, "", "%s", strings.TrimPrefix(msg, "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fail(0, "", "empty: want a targets: list")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fail(root.Line, "", "want a mapping with defaults: and targets:")
	}
	var defaults map[string]Value
	defaultRecover := true
	var list *yaml.Node
	seenTop := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seenTop[k.Value] {
			return nil, fail(k.Line, "", "%s: given twice", k.Value)
		}
		seenTop[k.Value] = true
		switch k.Value {
		case "defaults":
			if v.Kind != yaml.MappingNode {
				return nil, fail(v.Line, "", "defaults: want a mapping of probe keys")
			}
			defaults = map[string]Value{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				dk, dv := v.Content[j], v.Content[j+1]
				if dk.Value == "recover" {
					b, err := boolValue(dv)
					if err != nil {
						return nil, fail(dv.Line, "", "defaults: recover: %v", err)
					}
					defaultRecover = b
					continue
				}
				val, err := probeValue(dk, dv)
				if err != nil {
					return nil, fail(dk.Line, "", "defaults: %v", err)
				}
				if _, dup := defaults[dk.Value]; dup {
					return nil, fail(dk.Line, "", "defaults: %s: given twice", dk.Value)
				}
				defaults[dk.Value] = val
			}
		case "targets":
			if v.Kind != yaml.SequenceNode {
				return nil, fail(v.Line, "", "targets: want a list of targets")
			}
			list = v
		default:
			return nil, fail(k.Line, "", "unknown key %q (want defaults or targets)", k.Value)
		}
	}
	if list == nil {
		return nil, fail(root.Line, "", "no targets: list")
	}
	out := make([]FileTarget, 0, len(list.Content))
	names := map[string]int{}
	for _, e := range list.Content {
		if e.Kind != yaml.MappingNode {
			return nil, fail(e.Line, "", "a target must be a mapping with name: and url:")
		}
		t := FileTarget{Line: e.Line, Recover: defaultRecover, Probe: map[string]Value{}}
		for k, v := range defaults {
			t.Probe[k] = v
		}
		// The name first, so every other error can name the target.
		hasName := false
		for j := 0; j+1 < len(e.Content); j += 2 {
			if e.Content[j].Value == "name" {
				nv := e.Content[j+1]
				if nv.Kind != yaml.ScalarNode || nv.Tag == "!!null" || nv.Value == "" {
					return nil, fail(nv.Line, "", "name: want a non-empty string")
				}
				t.Name, hasName = nv.Value, true
			}
		}
		if !hasName {
			return nil, fail(e.Line, "", "a target without name: (names are identity in the state and the metrics)")
		}
		if prev, dup := names[t.Name]; dup {
			return nil, fail(e.Line, t.Name, "duplicate name (first at line %d)", prev)
		}
		names[t.Name] = e.Line
		seen := map[string]bool{}
		for j := 0; j+1 < len(e.Content); j += 2 {
			k, v := e.Content[j], e.Content[j+1]
			if seen[k.Value] {
				return nil, fail(k.Line, t.Name, "%s: given twice", k.Value)
			}
			seen[k.Value] = true
			switch k.Value {
			case "name":
			case "url":
				s, err := stringValue(v)
				if err != nil {
					return nil, fail(v.Line, t.Name, "url: %v", err)
				}
				t.URL, t.URLLine = s, v.Line
			case "started_at":
				s, err := stringValue(v)
				if err != nil {
					return nil, fail(v.Line, t.Name, "started_at: %v", err)
				}
				if t.StartedAt, err = target.ParseTime(s); err != nil {
					return nil, fail(v.Line, t.Name, "started_at: %q: %v", s, err)
				}
			case "recover":
				b, err := boolValue(v)
				if err != nil {
					return nil, fail(v.Line, t.Name, "recover: %v", err)
				}
				t.Recover = b
			default:
				val, err := probeValue(k, v)
				if err != nil {
					return nil, fail(k.Line, t.Name, "%v", err)
				}
				t.Probe[k.Value] = val
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// probeValue checks one probe key and its value's type.
func probeValue(k, v *yaml.Node) (Value, error) {
	kind, ok := ProbeKeys[k.Value]
	if !ok {
		return Value{}, fmt.Errorf("unknown key %q (want name, url, started_at, recover or one of: %s)", k.Value, strings.Join(probeKeyNames(), ", "))
	}
	val := Value{Line: k.Line}
	switch kind {
	case KindList:
		if v.Kind == yaml.SequenceNode {
			for _, e := range v.Content {
				s, err := stringValue(e)
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
	names := make([]string, 0, len(ProbeKeys))
	for k := range ProbeKeys {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// stringValue accepts a scalar (a number or a time written bare is taken as
// written: `expect_status: 200`, `started_at: 1700000000`).
func stringValue(v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return "", errors.New("want a string")
	}
	return v.Value, nil
}

func boolValue(v *yaml.Node) (bool, error) {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
		return false, errors.New("want true or false")
	}
	var b bool
	if err := v.Decode(&b); err != nil {
		return false, errors.New("want true or false")
	}
	return b, nil
}
