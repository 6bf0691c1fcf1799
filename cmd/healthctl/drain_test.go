package main

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/output"
)

// runDrainFlags runs `healthctl drain-test ARGS` on a real root command
// whose drain-test captures its options instead of running.
func runDrainFlags(t *testing.T, environ map[string]string, args ...string) (*drainOptions, int, string) {
	t.Helper()
	streams, _, _ := output.Test(false)
	a := &app{streams: streams, getenv: func(k string) string { return environ[k] }}
	root := a.newRootCmd()
	for _, c := range root.Commands() {
		if c.Name() == "drain-test" {
			root.RemoveCommand(c)
		}
	}
	var got *drainOptions
	root.AddCommand(a.newDrainCmd(func(o *drainOptions) error { got = o; return nil }))
	root.SetArgs(append([]string{"drain-test"}, args...))
	code, msg := ExitPass, ""
	if err := root.ExecuteContext(context.Background()); err != nil {
		code, msg = ExitUsage, err.Error()
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
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
		want func(*drainOptions) bool
		msg  string
	}{
		{"exec is split into words, no shell", nil, append([]string{"--exec", `sh -c 'svc; echo "done"'`}, urls...), 0,
			func(o *drainOptions) bool { return strings.Join(o.argv, "|") == `sh|-c|svc; echo "done"` }, ""},
		{"command after --", nil, append(urls, "--", "./server", "--port", "8080"), 0,
			func(o *drainOptions) bool { return strings.Join(o.argv, "|") == "./server|--port|8080" }, ""},
		{"defaults", nil, append([]string{"--exec", "svc"}, urls...), 0,
			func(o *drainOptions) bool {
				return o.preDrain == 5*time.Second && o.shutdown == 20*time.Second && o.flipMax == time.Second &&
					o.sig == syscall.SIGTERM && o.preDrainSource == "default"
			}, ""},
		{"signal and timings", nil, append([]string{"--pid", "42", "--signal", "sigint", "--pre-drain", "1s", "--shutdown-timeout", "3s"}, urls...), 0,
			func(o *drainOptions) bool {
				return o.pid == 42 && o.sig == syscall.SIGINT && o.preDrain == time.Second && o.preDrainSource == "--pre-drain"
			}, ""},
		{"env applies", map[string]string{"HEALTHCTL_DRAIN_TEST_PRE_DRAIN": "2s"}, append([]string{"--exec", "svc"}, urls...), 0,
			func(o *drainOptions) bool { return o.preDrain == 2*time.Second }, ""},
		{"manifest alone", nil, []string{"--manifest", "m.yaml"}, 0, func(o *drainOptions) bool { return o.manifest == "m.yaml" }, ""},
		{"exec and pid", nil, append([]string{"--exec", "svc", "--pid", "4"}, urls...), ExitUsage, nil, "mutually exclusive"},
		{"exec and --", nil, append(append([]string{"--exec", "svc"}, urls...), "--", "x"), ExitUsage, nil, "mutually exclusive"},
		{"no service", nil, urls, ExitUsage, nil, "needs a service"},
		{"pid 0", nil, append([]string{"--pid", "0"}, urls...), ExitUsage, nil, "--pid 0"},
		{"P >= S", nil, append([]string{"--exec", "svc", "--pre-drain", "20s"}, urls...), ExitUsage, nil, "must be shorter"},
		{"KILL", nil, append([]string{"--exec", "svc", "--signal", "KILL"}, urls...), ExitUsage, nil, "KILL cannot be handled"},
		{"no live", nil, []string{"--exec", "svc", "--ready", "http://x/"}, ExitUsage, nil, "--live URL is required"},
		{"bad inflight", nil, append([]string{"--exec", "svc", "--inflight", "ftp://x/"}, urls...), ExitUsage, nil, "--inflight"},
		{"empty exec", nil, append([]string{"--exec", "  "}, urls...), ExitUsage, nil, "empty command"},
		{"manifest with exec", nil, []string{"--manifest", "m.yaml", "--exec", "svc"}, ExitUsage, nil, "excludes"},
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
