package watch

import (
	"fmt"
	"strings"

	"github.com/healthctl/healthctl/internal/target"
)

// keyOfFlag maps a probe flag name to its targets-file key.
func keyOfFlag(flag string) string {
	for i := range target.Options {
		if target.Options[i].Flag == flag {
			return target.Options[i].Key()
		}
	}
	return strings.ReplaceAll(flag, "-", "_")
}

// Input applies the target's probe keys (defaults and its own) over base,
// the command's probe flags, and returns the input to build with
// target.Input.Build. Its Source names file, line, target and key for every
// value that came from the file (`targets.yaml:12: target "api":
// expect_status`), and defers to base's Source for the rest. Each key is
// parsed by its option in target.Options, as its flag is; everything else
// is validated by Build, as flags are.
func (t *FileEntry) Input(base target.Input, file string) (target.Input, error) {
	in := base
	baseSource := base.Source
	in.Source = func(flag string) string {
		if _, ok := t.Probe[keyOfFlag(flag)]; ok {
			return Source(file, t, keyOfFlag(flag))
		}
		if baseSource != nil {
			return baseSource(flag)
		}
		return ""
	}
	for key, v := range t.Probe {
		o := target.OptionByKey(key)
		if o == nil {
			return in, &target.Error{Source: Source(file, t, key), Err: fmt.Errorf("unknown key")}
		}
		if err := o.Set(&in, v.Strings); err != nil {
			return in, &target.Error{Source: fmt.Sprintf("%s %q", Source(file, t, key), v.Str()), Err: err}
		}
	}
	return in, nil
}

// URLSource names the url: line of the target, for URL errors.
func (t *FileEntry) URLSource(file string) string {
	return fmt.Sprintf("%s:%d: target %q: url", file, t.URLLine, t.Name)
}
