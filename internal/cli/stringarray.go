package cli

import (
	"bytes"
	"encoding/csv"
	"strings"

	"github.com/spf13/pflag"
)

// stringArray is pflag's stringArray value (same Type, Set, Append,
// Replace, GetSlice and String), registered by StringArrayVar. pflag renders
// a flag's default with String when the flag is defined, and its own
// stringArray does that through an encoding/csv writer (a 4 KiB buffer)
// even for an empty default, for each of the repeatable probe flags at
// every start. This one answers "[]" for empty.
type stringArray struct {
	value   *[]string
	changed bool
}

// StringArrayVar defines a repeatable string flag like pflag's
// StringArrayVarP with a nil default, with identical help text.
func StringArrayVar(fs *pflag.FlagSet, p *[]string, name, short, usage string) {
	*p = nil
	f := fs.VarPF(&stringArray{value: p}, name, short, usage)
	// pflag knows "[]" as an empty default only for its own slice types;
	// for any other Value an empty DefValue is what keeps "(default [])"
	// out of the help, as it is for pflag's stringArray.
	f.DefValue = ""
}

func (s *stringArray) Set(val string) error {
	if !s.changed {
		*s.value = []string{val}
		s.changed = true
	} else {
		*s.value = append(*s.value, val)
	}
	return nil
}

func (s *stringArray) Append(val string) error {
	*s.value = append(*s.value, val)
	return nil
}

func (s *stringArray) Replace(val []string) error {
	*s.value = append([]string(nil), val...)
	return nil
}

func (s *stringArray) GetSlice() []string { return append([]string{}, *s.value...) }

func (s *stringArray) Type() string { return "stringArray" }

func (s *stringArray) String() string {
	if len(*s.value) == 0 {
		return "[]"
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(*s.value); err != nil {
		return "[]"
	}
	w.Flush()
	return "[" + strings.TrimSuffix(b.String(), "\n") + "]"
}
