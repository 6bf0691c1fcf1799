package cli

import (
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/config"
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
	if err := config.Apply("wait-healthy", fs, config.Sources{Getenv: func(k string) string { return env[k] }}); err != nil {
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
	// Input names the flags the loader set, and only those.
	in := (&ProbeFlags{fs: fs}).Input()
	if got := in.SourceOf("successes"); got != "HEALTHCTL_WAIT_HEALTHY_SUCCESSES" {
		t.Errorf("SourceOf(successes) = %q", got)
	}
	if got := in.SourceOf("interval"); got != "--interval" {
		t.Errorf("SourceOf(interval) = %q", got)
	}
}
