package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// applyConfig fills every flag the user did not set on the command line, in
// this order of precedence: HEALTHCTL_<COMMAND>_<FLAG>, HEALTHCTL_<FLAG>, the
// config file's section for the command, the file's top level. The flags
// stay the one typed store commands read, so a value from env or file is
// parsed (and rejected) exactly like the same value on the command line.
func applyConfig(cmd *cobra.Command, configPath string, getenv env) error {
	file, path, err := readConfigFile(configPath, getenv)
	if err != nil {
		return err
	}
	cmdKey := cmd.Name()
	cmdEnv := "HEALTHCTL_" + envName(cmdKey) + "_"
	var firstErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if firstErr != nil || f.Changed || skipConfig[f.Name] {
			return
		}
		for _, name := range []string{cmdEnv + envName(f.Name), "HEALTHCTL_" + envName(f.Name)} {
			if v := getenv(name); v != "" {
				if err := setFlag(f, envValues(f, v)); err != nil {
					firstErr = fmt.Errorf("%s=%q: %v", name, redactedValue(f, v), err)
				}
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
			vals, err := fileValues(file.Get(key))
			if err == nil {
				err = setFlag(f, vals)
			}
			if err != nil {
				firstErr = fmt.Errorf("config %s: %s: %v", path, key, err)
			}
			return
		}
	})
	return firstErr
}

// skipConfig are flags that make no sense outside the command line.
var skipConfig = map[string]bool{"config": true, "help": true, "version": true}

func envName(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
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

func setFlag(f *pflag.Flag, vals []string) error {
	if !multi(f) && len(vals) > 1 {
		return fmt.Errorf("want one value, got %d", len(vals))
	}
	for _, v := range vals {
		if err := f.Value.Set(v); err != nil {
			return err
		}
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

// readConfigFile reads --config, else ./healthctl.yaml, else the user config
// dir's healthctl/healthctl.yaml; a missing default file is no error, a
// named one that cannot be read is.
func readConfigFile(explicit string, getenv env) (*viper.Viper, string, error) {
	if explicit == "" {
		explicit = getenv("HEALTHCTL_CONFIG")
	}
	path := explicit
	if path == "" {
		candidates := []string{"healthctl.yaml"}
		if dir, err := os.UserConfigDir(); err == nil {
			candidates = append(candidates, filepath.Join(dir, "healthctl", "healthctl.yaml"))
		}
		for _, c := range candidates {
			if _, err := os.Stat(c); err == nil {
				path = c
				break
			}
		}
		if path == "" {
			return nil, "", nil
		}
	}
	if st, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("config %s: no such file", path)
		}
		return nil, "", fmt.Errorf("config %s: %v", path, err)
	} else if st.IsDir() {
		return nil, "", fmt.Errorf("config %s: is a directory", path)
	}
	v := viper.New()
	v.SetConfigFile(path)
	if filepath.Ext(path) == "" {
		v.SetConfigType("yaml")
	}
	if err := v.ReadInConfig(); err != nil {
		return nil, "", fmt.Errorf("config %s: %v", path, oneLine(err.Error()))
	}
	return v, path, nil
}
