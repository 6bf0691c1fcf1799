package config

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestEnvironSkipsLookups: with Environ, the per-flag lookups happen only
// when some HEALTHCTL_ variable is set, and then apply as without it.
func TestEnvironSkipsLookups(t *testing.T) {
	for _, tt := range []struct {
		name    string
		environ []string
		want    int
		lookups bool
	}{
		{"no HEALTHCTL_ variable", []string{"PATH=/bin", "XHEALTHCTL_SUCCESSES=3"}, 1, false},
		{"one of the flag's names", []string{"PATH=/bin", "HEALTHCTL_SUCCESSES=3"}, 3, true},
		{"another HEALTHCTL_ variable", []string{"HEALTHCTL_OTHER=1", "HEALTHCTL_SUCCESSES=3"}, 3, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
			n := fs.Int("successes", 1, "")
			env := map[string]string{}
			for _, kv := range tt.environ {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			looked := false
			src := Sources{Environ: func() []string { return tt.environ },
				Getenv: func(k string) string {
					looked = looked || k == "HEALTHCTL_SUCCESSES" || k == "HEALTHCTL_PROBE_SUCCESSES"
					return env[k]
				}}
			if err := Apply("probe", fs, src); err != nil {
				t.Fatal(err)
			}
			if *n != tt.want || looked != tt.lookups {
				t.Errorf("successes = %d, looked up: %v; want %d, %v", *n, looked, tt.want, tt.lookups)
			}
		})
	}
}
