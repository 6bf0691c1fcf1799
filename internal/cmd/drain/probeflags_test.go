package draincmd

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/cli"
)

// TestProbeFlagsHonouredOnly: drain-test takes the probe flags it honours
// and refuses the others with one usage error naming the flag, instead of
// accepting and ignoring them.
func TestProbeFlagsHonouredOnly(t *testing.T) {
	base := []string{"--ready", "http://127.0.0.1:1/r", "--live", "http://127.0.0.1:1/l", "--", "true"}
	run := func(args ...string) (bool, error) {
		ran := false
		cmd := NewCmd(&cli.Factory{}, func(context.Context, *Options) error { ran = true; return nil })
		cmd.SetArgs(append(args, base...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		return ran, cmd.Execute()
	}
	for _, args := range [][]string{
		{"-H", "User-Agent: x"}, {"-H", "X-Drop:"}, {"--resolve", "a.invalid:80:127.0.0.1,127.0.0.2"},
		{"--cacert", "ca.pem"}, {"--insecure"}, {"-4"}, {"--connect-timeout", "1s"}, {"--exit-1"},
	} {
		if ran, err := run(args...); err != nil || !ran {
			t.Errorf("%q: ran %v, err %v; want accepted", args, ran, err)
		}
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--follow", "3"}, "--follow"}, {[]string{"-L"}, "--follow"}, {[]string{"-m", "3s"}, "--max-time"},
		{[]string{"--max-body", "1KiB"}, "--max-body"}, {[]string{"--expect-status", "200"}, "--expect-status"},
		{[]string{"--expect-json=a=b"}, "--expect-json"}, {[]string{"--expect-body", "ok"}, "--expect-body"},
		{[]string{"--all-addresses"}, "--all-addresses"},
	} {
		ran, err := run(c.args...)
		if ran || err == nil || !strings.HasPrefix(err.Error(), c.flag+": drain-test does not take") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: ran %v, err %v; want one line naming %s", c.args, ran, err, c.flag)
		}
		var ee *cli.ExitError
		if !errors.As(err, &ee) || ee.Code != 2 {
			t.Errorf("%q: %T %v is not a usage error (exit 2)", c.args, err, err)
		}
	}
}
