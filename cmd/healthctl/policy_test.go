package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	policycmd "github.com/healthctl/healthctl/internal/cmd/policy"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
)

// runPolicyFlags runs `healthctl ARGS` on a real root command whose policy
// command captures its options instead of running, so precedence (flags,
// env, config file) goes through the same PersistentPreRunE as a real run.
func runPolicyFlags(t *testing.T, environ map[string]string, args ...string) (policy.Settings, int, string) {
	t.Helper()
	streams, _, errb := output.Test(false)
	a := testFactory(streams, func(k string) string { return environ[k] })
	root := newRoot(a, nil)
	for _, c := range root.Commands() {
		if c.Name() == "policy" {
			root.RemoveCommand(c)
		}
	}
	var got *policycmd.Options
	root.AddCommand(policycmd.NewCmd(a, func(_ context.Context, o *policycmd.Options) error { got = o; return nil }))
	root.SetArgs(args)
	code := exitcode.Pass
	if err := root.ExecuteContext(context.Background()); err != nil {
		code = exitcode.Usage
		var ee *cli.ExitError
		if errors.As(err, &ee) {
			code = ee.Code
		}
		errb.WriteString(err.Error())
	}
	if got == nil {
		return policy.Settings{}, code, errb.String()
	}
	s, err := got.Settings()
	if err != nil {
		return s, exitcode.Usage, err.Error()
	}
	return s, code, errb.String()
}

func TestPolicyFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "healthctl.yaml")
	if err := os.WriteFile(cfg, []byte("grace: 5m\nfailure-threshold: 4\npolicy:\n  failure-threshold: 3\n  tls-pending-max: 1h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	def := policy.DefaultSettings()
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    policy.Settings
		code    int
		errPart string
	}{
		{name: "defaults", args: nil, want: def},
		{
			name: "flags",
			args: []string{"--grace", "5m", "--failure-threshold", "3", "--escalate-timeouts-after", "2", "--tls-pending-max", "10m"},
			want: policy.Settings{Grace: 5 * time.Minute, FailureThreshold: 3, EscalateTimeoutsAfter: 2, TLSPendingMax: 10 * time.Minute},
		},
		{
			name: "HEALTHCTL_<FLAG>",
			env:  map[string]string{"HEALTHCTL_GRACE": "5m", "HEALTHCTL_FAILURE_THRESHOLD": "3"},
			want: policy.Settings{Grace: 5 * time.Minute, FailureThreshold: 3},
		},
		{
			name: "HEALTHCTL_POLICY_<FLAG> beats HEALTHCTL_<FLAG>",
			env:  map[string]string{"HEALTHCTL_FAILURE_THRESHOLD": "7", "HEALTHCTL_POLICY_FAILURE_THRESHOLD": "3", "HEALTHCTL_POLICY_ESCALATE_TIMEOUTS_AFTER": "4"},
			want: policy.Settings{Grace: def.Grace, FailureThreshold: 3, EscalateTimeoutsAfter: 4},
		},
		{
			name: "flag beats env",
			env:  map[string]string{"HEALTHCTL_POLICY_FAILURE_THRESHOLD": "3"},
			args: []string{"--failure-threshold", "2"},
			want: policy.Settings{Grace: def.Grace, FailureThreshold: 2},
		},
		{
			name: "config file: section beats top level",
			args: []string{"--config", cfg},
			want: policy.Settings{Grace: 5 * time.Minute, FailureThreshold: 3, TLSPendingMax: time.Hour},
		},
		{
			name: "env beats config file",
			env:  map[string]string{"HEALTHCTL_GRACE": "1m"},
			args: []string{"--config", cfg},
			want: policy.Settings{Grace: time.Minute, FailureThreshold: 3, TLSPendingMax: time.Hour},
		},
		{
			name: "flag beats config file",
			args: []string{"--config", cfg, "--tls-pending-max", "0"},
			want: policy.Settings{Grace: 5 * time.Minute, FailureThreshold: 3},
		},
		{name: "threshold 0", args: []string{"--failure-threshold", "0"}, code: exitcode.Usage, errPart: "--failure-threshold must be at least 1, got 0"},
		{name: "negative grace", args: []string{"--grace", "-1m"}, code: exitcode.Usage, errPart: "--grace must not be negative"},
		{name: "bad duration", args: []string{"--grace", "soon"}, code: exitcode.Usage, errPart: "soon"},
		{name: "bad env", env: map[string]string{"HEALTHCTL_GRACE": "soon"}, code: exitcode.Usage, errPart: "HEALTHCTL_GRACE"},
		{name: "no arguments", args: []string{"extra"}, code: exitcode.Usage, errPart: "unknown command"},
		{name: "age is not a policy flag", args: []string{"--age", "1m"}, code: exitcode.Usage, errPart: "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, code, errText := runPolicyFlags(t, tt.env, append([]string{"policy"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d (%s)", code, tt.code, errText)
			}
			if tt.errPart != "" {
				if !strings.Contains(errText, tt.errPart) {
					t.Fatalf("error %q does not contain %q", errText, tt.errPart)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("settings = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// runPolicy runs `healthctl policy ARGS` in-process for real.
func runPolicy(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	streams, out, errb := output.Test(false)
	a := testFactory(streams, func(string) string { return "" })
	code := run(context.Background(), a, append([]string{"policy"}, args...))
	return code, out.String(), errb.String()
}

func TestPolicyUsageError(t *testing.T) {
	code, out, errText := runPolicy(t, "--failure-threshold", "0")
	if code != exitcode.Usage || out != "" {
		t.Fatalf("exit %d, stdout %q; want 2 and nothing", code, out)
	}
	if want := "healthctl: --failure-threshold must be at least 1, got 0\n"; errText != want {
		t.Fatalf("stderr %q, want %q", errText, want)
	}
}
