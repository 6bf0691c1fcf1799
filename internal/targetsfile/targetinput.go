package targetsfile

import (
	"fmt"
	"maps"

	"github.com/healthctl/healthctl/internal/target"
)

// Input applies the target's probe keys (defaults and its own) over base,
// the command's probe flags, and returns the input to build with
// target.Input.Build. Its Source names file, line, target and key for every
// value that came from the file (`targets.yaml:12: target "api":
// expect_status`), and keeps base's Sources for the rest. Each key is
// parsed by its option in target.Options, as its flag is; everything else
// is validated by Build, as flags are.
func (t *FileEntry) Input(base target.Input, file string) (target.Input, error) {
	in := base
	if len(t.Probe) > 0 {
		in.Sources = make(map[string]string, len(base.Sources)+len(t.Probe))
		maps.Copy(in.Sources, base.Sources)
	}
	for key, v := range t.Probe {
		o := target.OptionByKey(key)
		if o == nil {
			return in, &target.Error{Source: Source(file, t, key), Err: fmt.Errorf("unknown key")}
		}
		in.Sources[o.Flag] = Source(file, t, key)
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
