package targetsfile

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

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
