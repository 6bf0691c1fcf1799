package blackbox

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// field is one key of a module's section as it is read: its value, and the
// error that names it (the file's line, the module, section.key).
type field struct {
	val *yaml.Node
	bad func(format string, args ...any) error
}

func newField(val *yaml.Node, fail failFunc, module, name string) field {
	return field{val: val, bad: func(format string, args ...any) error { return fail(val.Line, module, name, format, args...) }}
}

// str is the field's single value.
func (f field) str() (string, error) {
	if f.val.Kind != yaml.ScalarNode {
		return "", f.bad("want a single value")
	}
	return f.val.Value, nil
}

// list is the field's list of single values.
func (f field) list() ([]string, error) {
	if f.val.Kind != yaml.SequenceNode {
		return nil, f.bad("want a list")
	}
	var out []string
	for _, e := range f.val.Content {
		if e = deref(e); e.Kind != yaml.ScalarNode {
			return nil, f.bad("want a list of values")
		}
		out = append(out, e.Value)
	}
	return out, nil
}

// boolean is the field's true or false.
func (f field) boolean() (bool, error) {
	s, err := f.str()
	if err != nil {
		return false, err
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, f.bad("%q: want true or false", s)
	}
	return b, nil
}
