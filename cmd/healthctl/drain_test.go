package main

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	draincmd "github.com/healthctl/healthctl/internal/cmd/drain"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
)

// runDrainFlags runs `healthctl drain-test ARGS` on a real root command
// whose drain-test captures its options instead of running.
func runDrainFlags(t *testing.T, environ map[string]string, args ...string) (*draincmd.Options, int, string) {
	t.Helper()
	streams, _, _ := output.Test(false)
	a := testFactory(streams, func(k string) string { return environ[k] })
	root := newRoot(a, nil)
	for _, c := range root.Commands() {
		if c.Name() == "drain-test" {
			root.RemoveCommand(c)
		}
	}
	var got *draincmd.Options
	root.AddCommand(draincmd.NewCmd(a, func(_ context.Context, o *draincmd.Options) error { got = o; return nil }))
	root.SetArgs(append([]string{"drain-test"}, args...))
	code, msg := exitcode.Pass, ""
	if err := root.ExecuteContext(context.Background()); err != nil {
		code, msg = exitcode.Usage, err.Error()
		var ee *cli.ExitError
		if errors.As(err, &ee) {
			code = ee.Code
		}
	}
	return got, code, msg
}

func TestDrainFlags(t *testing.T) {
	urls := []string{"--ready", "http://127.0.0.1:1/ready", "--live", "http://127.0.0.1:1/live"}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want func(*draincmd.Options) bool
		msg  string
	}{
		{"exec is split into words, no shell", nil, append([]string{"--exec", `sh -c 'svc; echo "done"'`}, urls...), 0,
			func(o *draincmd.Options) bool { return strings.Join(o.Argv, "|") == `sh|-c|svc; echo "done"` }, ""},
		{"command after --", nil, append(urls, "--", "./server", "--port", "8080"), 0,
			func(o *draincmd.Options) bool { return strings.Join(o.Argv, "|") == "./server|--port|8080" }, ""},
		{"defaults", nil, append([]string{"--exec", "svc"}, urls...), 0,
			func(o *draincmd.Options) bool {
				return o.PreDrain == 5*time.Second && o.Shutdown == 20*time.Second && o.FlipMax == time.Second &&
					o.Sig == syscall.SIGTERM && o.PreDrainSource == "default"
			}, ""},
		{"signal and timings", nil, append([]string{"--pid", "42", "--signal", "sigint", "--pre-drain", "1s", "--shutdown-timeout", "3s"}, urls...), 0,
			func(o *draincmd.Options) bool {
				return o.Pid == 42 && o.Sig == syscall.SIGINT && o.PreDrain == time.Second && o.PreDrainSource == "--pre-drain"
			}, ""},
		{"env applies", map[string]string{"HEALTHCTL_DRAIN_TEST_PRE_DRAIN": "2s"}, append([]string{"--exec", "svc"}, urls...), 0,
			func(o *draincmd.Options) bool { return o.PreDrain == 2*time.Second }, ""},
		{"manifest alone", nil, []string{"--manifest", "m.yaml"}, 0, func(o *draincmd.Options) bool { return o.Manifest == "m.yaml" }, ""},
		{"exec and pid", nil, append([]string{"--exec", "svc", "--pid", "4"}, urls...), exitcode.Usage, nil, "mutually exclusive"},
		{"exec and --", nil, append(append([]string{"--exec", "svc"}, urls...), "--", "x"), exitcode.Usage, nil, "mutually exclusive"},
		{"no service", nil, urls, exitcode.Usage, nil, "needs a service"},
		{"pid 0", nil, append([]string{"--pid", "0"}, urls...), exitcode.Usage, nil, "--pid 0"},
		{"P >= S", nil, append([]string{"--exec", "svc", "--pre-drain", "20s"}, urls...), exitcode.Usage, nil, "must be shorter"},
		{"KILL", nil, append([]string{"--exec", "svc", "--signal", "KILL"}, urls...), exitcode.Usage, nil, "KILL cannot be handled"},
		{"no live", nil, []string{"--exec", "svc", "--ready", "http://x/"}, exitcode.Usage, nil, "--live URL is required"},
		{"bad inflight", nil, append([]string{"--exec", "svc", "--inflight", "ftp://x/"}, urls...), exitcode.Usage, nil, "--inflight"},
		{"empty exec", nil, append([]string{"--exec", "  "}, urls...), exitcode.Usage, nil, "empty command"},
		{"manifest with exec", nil, []string{"--manifest", "m.yaml", "--exec", "svc"}, exitcode.Usage, nil, "excludes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, code, msg := runDrainFlags(t, tt.env, tt.args...)
			if code != tt.code || !strings.Contains(msg, tt.msg) {
				t.Fatalf("exit %d %q, want %d %q", code, msg, tt.code, tt.msg)
			}
			if tt.want != nil && (o == nil || !tt.want(o)) {
				t.Errorf("options %+v", o)
			}
		})
	}
}
