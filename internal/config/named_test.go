package config

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestNamed: a value is named by its source, the way it was written there.
func TestNamed(t *testing.T) {
	fs := pflag.NewFlagSet("wait-healthy", pflag.ContinueOnError)
	fs.Duration("interval", time.Second, "")
	fs.String("statsd", "", "")
	fs.Int("successes", 1, "")
	if err := fs.Parse([]string{"--interval", "0s", "--statsd", "local host"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HEALTHCTL_WAIT_HEALTHY_SUCCESSES": "0"}
	if err := Apply("wait-healthy", fs, Sources{Getenv: func(k string) string { return env[k] }}); err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string]string{
		"interval":  "--interval 0s",
		"statsd":    `--statsd "local host"`,
		"successes": "HEALTHCTL_WAIT_HEALTHY_SUCCESSES=0",
	} {
		if got := Named(fs, flag); got != want {
			t.Errorf("Named(%s) = %q, want %q", flag, got, want)
		}
	}
	for _, tt := range []struct{ src, val, want string }{
		{"HEALTHCTL_X", "a b", `HEALTHCTL_X="a b"`},
		{"targets.yaml:3", "x", `targets.yaml:3 "x"`},
		{"config f.yaml: shard", "", `config f.yaml: shard ""`},
	} {
		if got := Quote(tt.src, tt.val); got != tt.want {
			t.Errorf("Quote(%q, %q) = %q, want %q", tt.src, tt.val, got, tt.want)
		}
	}
}
