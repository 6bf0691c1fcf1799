// Package config fills a command's flags from the environment
// (HEALTHCTL_<COMMAND>_<FLAG>, HEALTHCTL_<FLAG>) and the config file, and
// records where each value came from so errors can name it. It takes its
// environment and directories as inputs: nothing here reads the process's
// own.
package config

import (
	"bytes"
	"errors"
	"fmt"
	src "github.com/healthctl/healthctl/internal/source"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/yamlsafe"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/words"
)

// Sources are where configuration comes from, for one run.
type Sources struct {
	// Explicit is --config's value ("" when not given).
	Explicit string
	// Getenv reads the environment.
	Getenv func(string) string
	// Environ lists the environment as NAME=VALUE (nil: every flag's two
	// names are looked up with Getenv). With it, a run without any
	// HEALTHCTL_ variable skips those lookups (two names for each of some
	// ninety flags, a share of every probe's start-up).
	Environ func() []string
	// UserConfigDir is the directory holding healthctl/healthctl.yaml (nil:
	// none is looked for).
	UserConfigDir func() (string, error)
	// Known returns the flags of the root (persistent) and of every command
	// by name, to check the file's keys against; called only when a file
	// is read.
	Known func() Known
}

// Known are the flag names a config file may use.
type Known struct {
	Root     *pflag.FlagSet
	Commands map[string]*pflag.FlagSet
}

// Apply fills every flag of the command cmdName that the user did not set on
// the command line, in this order of precedence:
// HEALTHCTL_<COMMAND>_<FLAG>, HEALTHCTL_<FLAG>, the config file's section
// for the command, the file's top level. The flags stay the one typed store
// commands read, so a value from env or file is parsed (and rejected)
// exactly like the same value on the command line.
func Apply(cmdName string, flags *pflag.FlagSet, src Sources) error {
	getenv := src.Getenv
	file, path, named, err := readConfigFile(src)
	if err != nil {
		return err
	}
	if file != nil && src.Known != nil {
		if err := checkConfigKeys(src.Known(), file.AllSettings(), path); err != nil {
			return err
		}
	}
	cmdKey := cmdName
	cmdEnv := "HEALTHCTL_" + envName(cmdKey) + "_"
	envSet := src.Environ == nil || slices.ContainsFunc(src.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "HEALTHCTL_") })
	if !envSet && file == nil {
		return nil
	}
	var firstErr error
	flags.VisitAll(func(f *pflag.Flag) {
		if firstErr != nil || f.Changed || skipConfig(f.Name) {
			return
		}
		for _, name := range envNames(envSet, cmdEnv, f.Name) {
			if v := getenv(name); v != "" {
				if RunsCommand(cmdName, f.Name) {
					firstErr = fmt.Errorf("%s: --%s runs a command: it is read only from the command line or a config file named by --config or HEALTHCTL_CONFIG, never from a variable", name, f.Name)
					return
				}
				if err := setFlag(f, envValues(f, v)); err != nil {
					firstErr = fmt.Errorf("%s=%q: %v", name, redactedValue(f, v), err)
				}
				annotateSource(f, name, redactedValue(f, v))
				return
			}
		}
		if file == nil {
			return
		}
		for _, key := range []string{cmdKey + "." + f.Name, f.Name} {
			if !file.IsSet(key) {
				continue
			}
			if RunsCommand(cmdName, f.Name) && !named {
				firstErr = fmt.Errorf("config %s: %s: --%s runs a command: it is read only from the command line or a config file named by --config or HEALTHCTL_CONFIG", path, key, f.Name)
				return
			}
			vals, err := fileValues(file.Get(key))
			if err == nil {
				err = setFlag(f, vals)
			}
			if err != nil {
				firstErr = fmt.Errorf("config %s: %s: %v", path, key, err)
			}
			annotateSource(f, fmt.Sprintf("config %s: %s", path, key), redactedValue(f, strings.Join(vals, ",")))
			return
		}
	})
	return firstErr
}

// envNames are the variables that may set flag, most specific first (none
// when no HEALTHCTL_ variable is set at all).
func envNames(envSet bool, cmdEnv, flag string) []string {
	if !envSet {
		return nil
	}
	en := envName(flag)
	return []string{cmdEnv + en, "HEALTHCTL_" + en}
}

// annotateSource records on f where its value came from and the text it
// was given there (source.Annotation, source.RawAnnotation), so that an
// error names them (cli.FlagSource, cli.Named).
func annotateSource(f *pflag.Flag, from, raw string) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[src.Annotation] = []string{from}
	f.Annotations[src.RawAnnotation] = []string{raw}
}

// RunsCommand reports whether cmdName's flag is a command healthctl runs
// (watch's --on-redeploy, drain-test's --exec): those come only from the
// command line or a named config file. These tables are code, not map
// literals: a package-level map is built at every start, probe included.
func RunsCommand(cmdName, flag string) bool {
	return cmdName == "watch" && flag == "on-redeploy" || cmdName == "drain-test" && flag == "exec"
}

// skipConfig says a flag makes no sense outside the command line.
func skipConfig(name string) bool { return name == "config" || name == "help" || name == "version" }

// envName is a flag's name as a variable's: upper case, _ for -. Flag names
// are ASCII; one pass and one allocation, for every flag of every start.
func envName(s string) string {
	b := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-':
			c = '_'
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		b[i] = c
	}
	return string(b)
}

// multi reports whether a flag takes several values.
func multi(f *pflag.Flag) bool {
	t := f.Value.Type()
	return strings.HasSuffix(t, "Array") || strings.HasSuffix(t, "Slice")
}

// envValues splits multi-value variables on newlines only: a header value
// has spaces and commas ("Authorization: Bearer x").
func envValues(f *pflag.Flag, v string) []string {
	if !multi(f) {
		return []string{v}
	}
	var out []string
	for _, line := range strings.Split(v, "\n") {
		if line = strings.TrimRight(line, "\r"); strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	return out
}

func fileValues(v any) ([]string, error) {
	switch x := v.(type) {
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out, nil
	case map[string]any:
		return nil, errors.New("want a value, got a section")
	case nil:
		return nil, nil
	}
	return []string{fmt.Sprint(v)}, nil
}

// setFlag sets f from a variable or the config file and marks it set, as
// FlagSet.Set does: a command asking whether the user chose a value
// (-o text means a table even on a pipe) gets the same answer whatever the
// value's source; the source itself is kept in the flag's annotation.
func setFlag(f *pflag.Flag, vals []string) error {
	if !multi(f) && len(vals) > 1 {
		return fmt.Errorf("want one value, got %d", len(vals))
	}
	for _, v := range vals {
		if f.Value.Type() == "bool" {
			// HEALTHCTL_BYPASS=yes: variables and files say yes/no, on/off.
			b, err := words.ParseBool(v)
			if err != nil {
				return err
			}
			v = strconv.FormatBool(b)
		}
		if err := f.Value.Set(v); err != nil {
			return err
		}
		f.Changed = true
	}
	return nil
}

// redactedValue keeps header values out of error lines.
func redactedValue(f *pflag.Flag, v string) string {
	if f.Name == "header" || f.Name == "user" {
		return "***"
	}
	return v
}

// readConfigFile reads the file named by --config or HEALTHCTL_CONFIG, else
// the user config dir's healthctl/healthctl.yaml — never a file from the
// working directory unless named: in CI that is the checked-out pull
// request, which must not turn a gate off or run a command. A missing
// default file is no error, a named one that cannot be read is; named
// reports whether the file was named.
func readConfigFile(src Sources) (v *viper.Viper, path string, named bool, err error) {
	path = src.Explicit
	if path == "" {
		path = src.Getenv("HEALTHCTL_CONFIG")
	}
	named = path != ""
	if path == "" {
		if src.UserConfigDir == nil {
			return nil, "", false, nil
		}
		dir, err := src.UserConfigDir()
		if err != nil || dir == "" {
			return nil, "", false, nil
		}
		c := filepath.Join(dir, "healthctl", "healthctl.yaml")
		if _, err := os.Stat(c); err != nil {
			return nil, "", false, nil
		}
		path = c
	}
	// A named file can carry a command (on-redeploy, exec): it must be
	// the user's or root's, writable by no one else, all the way from /
	// (sshd's StrictModes rule), or another user could make healthctl run
	// one of theirs.
	if named {
		if err := inputfile.TrustInput(path, inputfile.Config); err != nil {
			return nil, "", named, err
		}
	}
	// A regular file within its cap, opened without blocking (a FIFO is
	// refused at once), and YAML whose merge keys stay within a budget:
	// viper's decoder expands them without one.
	data, err := inputfile.Read(path, inputfile.Config)
	if err != nil {
		var ie *inputfile.Error
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, "", named, fmt.Errorf("config %s: no such file", path)
		case errors.As(err, &ie):
			return nil, "", named, fmt.Errorf("config %s: %v", path, ie.Err)
		}
		return nil, "", named, fmt.Errorf("config %s: %v", path, err)
	}
	v = viper.NewWithOptions(viper.WithCodecRegistry(yamlCodecs()))
	v.SetConfigFile(path)
	if filepath.Ext(path) == "" {
		v.SetConfigType("yaml")
	}
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		var bomb *yamlsafe.Error
		if errors.As(err, &bomb) {
			return nil, "", named, fmt.Errorf("config %s: %v", path, bomb)
		}
		return nil, "", named, fmt.Errorf("config %s: %v", path, strings.Join(strings.Fields(err.Error()), " "))
	}
	return v, path, named, nil
}

// checkConfigKeys rejects what would otherwise be silently ignored: a key
// that is no flag of any command (a typo such as conect-timeout), a command
// section that is not a map, and a key in a section that the command does
// not have.
func checkConfigKeys(known Known, settings map[string]any, path string) error {
	all := map[string]bool{}
	addFlags := func(fs *pflag.FlagSet, into map[string]bool) {
		if fs != nil {
			fs.VisitAll(func(f *pflag.Flag) { into[f.Name] = true })
		}
	}
	addFlags(known.Root, all)
	sections := known.Commands
	for _, fs := range sections {
		addFlags(fs, all)
	}
	for _, key := range sortedKeys(settings) {
		val := settings[key]
		if c, ok := sections[key]; ok {
			sec, ok := val.(map[string]any)
			if !ok {
				return fmt.Errorf("config %s: %s: want a section of %s's flags (key: value), got %s", path, key, key, shapeOf(val))
			}
			own := map[string]bool{}
			addFlags(known.Root, own)
			addFlags(c, own)
			for _, k := range sortedKeys(sec) {
				if !own[k] || skipConfig(k) {
					return fmt.Errorf("config %s: %s.%s: %s has no flag --%s%s", path, key, k, key, k, suggest(k, own))
				}
			}
			continue
		}
		if !all[key] || skipConfig(key) {
			return fmt.Errorf("config %s: %s: unknown key (no command has a flag --%s)%s", path, key, key, suggest(key, all))
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func shapeOf(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("the value %v", v)
}

// suggest names the closest known key when the typo is small.
func suggest(key string, known map[string]bool) string {
	best, bestD := "", 3
	for k := range known {
		if d := editDistance(key, k); d < bestD || (d == bestD && best != "" && k < best) {
			best, bestD = k, d
		}
	}
	if best == "" || skipConfig(best) {
		return ""
	}
	return fmt.Sprintf("; did you mean %s?", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// yamlCodecs is viper's codec table with its YAML decoder replaced by
// safeYAML: viper stays the one reader of the config file, and the file is
// parsed once, its aliases and merge keys within a budget before they are
// expanded (viper's own decoder expands them without one).
// Made on first use: most starts read no config file.
var yamlCodecs = sync.OnceValue(func() *viper.DefaultCodecRegistry {
	r := viper.NewCodecRegistry()
	_ = r.RegisterCodec("yaml", safeYAML{})
	_ = r.RegisterCodec("yml", safeYAML{})
	return r
})

// safeYAML decodes YAML through one node tree checked by yamlsafe.
type safeYAML struct{}

func (safeYAML) Encode(v map[string]any) ([]byte, error) { return yaml.Marshal(v) }

func (safeYAML) Decode(b []byte, v map[string]any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return err
	}
	if err := yamlsafe.Check(&doc); err != nil {
		return err
	}
	if doc.Kind == 0 {
		return nil // an empty file
	}
	return doc.Decode(&v)
}
