package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
)

// specOutcomes is a literal copy of the product contract's outcome table (outcome and
// exit code), so the test fails when the code drifts from the contract.
const specOutcomes = `
| pass | 0 |
| unreachable | 1 |
| tls | 3 |
| timeout | 4 |
| refused | 5 |
| dns | 6 |
| unknown | 9 |
`

// specReasons is a literal copy of the product contract's reason list, by outcome.
const specReasons = `
dns: dns_nxdomain dns_no_address dns_servfail
timeout: dns_timeout connect_timeout tls_handshake_timeout headers_timeout body_timeout request_body_timeout
refused: conn_refused
tls: tls_unknown_authority tls_insecure_algorithm tls_hostname_mismatch tls_expired tls_not_yet_valid tls_not_tls tls_client_cert_required tls_protocol_version tls_revoked tls_must_staple tls_remote_alert tls_handshake_failure
unreachable: http_status redirect condition_failed conn_reset host_unreachable net_unreachable protocol_error proxy_error no_url grpc_not_serving grpc_service_unknown grpc_unimplemented grpc_status grpc_protocol redis_loading redis_masterdown redis_busy redis_auth redis_cluster_down redis_error redis_protocol postgres_starting_up postgres_shutting_down postgres_recovery postgres_too_many_connections postgres_auth postgres_database postgres_read_only postgres_error postgres_protocol dns_rcode dns_protocol amqp_auth amqp_vhost amqp_error amqp_protocol mysql_too_many_connections mysql_auth mysql_host_blocked mysql_database mysql_starting_up mysql_shutting_down mysql_error mysql_protocol
pass: ok degraded
unknown: local_error resolver_unreachable resolver_refused resolver_error proxy_unreachable proxy_auth_required proxy_refused proxy_timeout proxy_tls
`

// specOtherCodes are the contract's exit codes that are not outcomes.
// "degraded" is the degraded pass's own exit code (§4: "its own word and
// exit code"; the number is this code's choice, the first code free).
var specOtherCodes = map[string]int{"degraded": 10, "usage": 2, "drain": 7, "redeploy": 8, "internal": 70, "ioerror": 74, "sigint": 130, "sigterm": 143}

func TestReasonOutcomeExitTableMatchesSpec(t *testing.T) {
	want := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(specOutcomes), "\n") {
		f := strings.Fields(strings.Trim(line, "| "))
		var code int
		for _, c := range f[2] {
			code = code*10 + int(c-'0')
		}
		want[f[0]] = code
	}
	if len(want) != len(classify.Outcomes) {
		t.Fatalf("spec has %d outcomes, code has %d", len(want), len(classify.Outcomes))
	}
	for _, o := range classify.Outcomes {
		code, ok := want[string(o)]
		if !ok {
			t.Errorf("outcome %q is not in the spec", o)
			continue
		}
		if got := exitcode.ForOutcome(o); got != code {
			t.Errorf("exitcode.ForOutcome(%s) = %d, spec says %d", o, got, code)
		}
	}

	var specAll []string
	for _, line := range strings.Split(strings.TrimSpace(specReasons), "\n") {
		outcome, list, _ := strings.Cut(line, ":")
		for _, r := range strings.Fields(list) {
			specAll = append(specAll, r)
			reason := classify.Reason(r)
			if got := reason.Outcome(); string(got) != outcome {
				t.Errorf("reason %s: outcome %s, spec says %s", r, got, outcome)
			}
			if got, w := exitcode.ForOutcome(reason.Outcome()), want[outcome]; got != w {
				t.Errorf("reason %s: exit %d, spec says %d", r, got, w)
			}
		}
	}
	var codeAll []string
	for _, r := range classify.Reasons {
		codeAll = append(codeAll, string(r))
	}
	slices.Sort(specAll)
	slices.Sort(codeAll)
	if !slices.Equal(specAll, codeAll) {
		t.Errorf("reason sets differ:\n spec %v\n code %v", specAll, codeAll)
	}

	for name, code := range map[string]int{"degraded": exitcode.Degraded, "usage": exitcode.Usage, "drain": exitcode.DrainFailed, "redeploy": exitcode.Redeploy, "internal": exitcode.Internal, "ioerror": exitcode.IOError, "sigint": exitcode.SIGINT, "sigterm": exitcode.SIGTERM} {
		if specOtherCodes[name] != code {
			t.Errorf("%s exit code %d, spec says %d", name, code, specOtherCodes[name])
		}
	}
}

// TestCrashExitCodeIsOurs: internal/crash keeps its own copy of the
// internal-error code (it cannot import cmd); it must be this one.
func TestCrashExitCodeIsOurs(t *testing.T) {
	if crash.ExitInternal != exitcode.Internal {
		t.Errorf("crash.ExitInternal = %d, exit.go says %d", crash.ExitInternal, exitcode.Internal)
	}
}

func TestSignalExit(t *testing.T) {
	for sig, want := range map[os.Signal]int{syscall.SIGTERM: exitcode.SIGTERM, syscall.SIGINT: exitcode.SIGINT, nil: exitcode.SIGINT} {
		if got := exitcode.ForSignal(sig); got != want {
			t.Errorf("exitcode.ForSignal(%v) = %d, want %d", sig, got, want)
		}
	}
}

// TestCompletionUnsupportedShell: Cobra's completion command prints its
// help and exits 0 for a shell it cannot write for; that is a usage error.
func TestCompletionUnsupportedShell(t *testing.T) {
	streams, out, errb := output.Test(false)
	a := testFactory(streams, func(string) string { return "" })
	code := run(t.Context(), a, []string{"completion", "tcsh"})
	if code != exitcode.Usage || out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and one line", code, out, errb)
	}
	for _, sh := range []string{"tcsh", "bash", "zsh", "fish", "powershell"} {
		if !strings.Contains(errb.String(), sh) {
			t.Errorf("stderr %q does not name %s", errb, sh)
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		streams, out, errb := output.Test(false)
		a := testFactory(streams, func(string) string { return "" })
		if code := run(t.Context(), a, []string{"completion", sh}); code != 0 || out.Len() == 0 {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", sh, code, out.Len(), errb)
		}
	}
}

// TestTreeBuiltForTheCommandRun: a run builds only the command it names,
// and help (or anything else) still sees every command.
func TestTreeBuiltForTheCommandRun(t *testing.T) {
	streams, _, _ := output.Test(false)
	a := testFactory(streams, func(string) string { return "" })
	if cmds := newRoot(a, []string{"probe", "http://x/"}).Commands(); len(cmds) != 1 || cmds[0].Name() != "probe" {
		t.Errorf("probe run builds %d commands", len(cmds))
	}
	var names []string
	for _, c := range newRoot(a, []string{"--help"}).Commands() {
		names = append(names, c.Name())
	}
	for _, want := range []string{"probe", "version", "wait-healthy", "policy"} {
		if !slices.Contains(names, want) {
			t.Errorf("full tree %v lacks %s", names, want)
		}
	}
	streams, out, _ := output.Test(false)
	a = testFactory(streams, func(string) string { return "" })
	if code := run(t.Context(), a, []string{"help"}); code != 0 || !strings.Contains(out.String(), "wait-healthy") {
		t.Errorf("help: exit %d, %q", code, out)
	}
}

// TestExitCodeOfUntypedErrors: an error without a code is never 2 by
// default: a write failure is 74, cobra's own errors (before the command
// ran) are 2, anything else a command returns is 70 (a bug).
func TestExitCodeOfUntypedErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		ran  bool
		want int
	}{
		{"write error", output.NewWriteError("stdout", syscall.ENOSPC), true, exitcode.IOError},
		{"read-only file system, untyped", fmt.Errorf("saving: %w", syscall.EROFS), true, exitcode.IOError},
		{"closed pipe, untyped", &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}, true, exitcode.IOError},
		{"cobra: unknown command", errors.New(`unknown command "prob" for "healthctl"`), false, exitcode.Usage},
		{"untyped from a command", errors.New("something"), true, exitcode.Internal},
		{"typed usage", cli.UsageErrorf("--x: bad"), true, exitcode.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, errb := output.Test(false)
			a := testFactory(streams, func(string) string { return "" })
			if got := exitCode(a, nil, tt.err, tt.ran); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
			if strings.Count(errb.String(), "\n") != 1 {
				t.Errorf("stderr %q: want one line", errb)
			}
		})
	}
}

// TestExitStdoutWriteFailure: a command whose text output cannot be
// written (stdout a full disk) exits 74 with one line, through the
// factory's stdout.
func TestExitStdoutWriteFailure(t *testing.T) {
	streams, _, errb := output.Test(false)
	streams.Out = failingWriter{}
	a := testFactory(streams, func(string) string { return "" })
	if code := run(t.Context(), a, []string{"version"}); code != exitcode.IOError {
		t.Fatalf("exit %d, want 74; stderr %q", code, errb)
	}
	if !strings.HasPrefix(errb.String(), "healthctl: cannot write stdout: ") {
		t.Errorf("stderr %q", errb)
	}
	streams, _, errb = output.Test(false)
	streams.Out = failingWriter{}
	a = testFactory(streams, func(string) string { return "" })
	if code := run(t.Context(), a, []string{"-o", "json", "policy"}); code != exitcode.IOError {
		t.Fatalf("policy -o json: exit %d, want 74; stderr %q", code, errb)
	}
}

// TestExitStdoutWriteFailureOverQuietCode: a run that meant to exit 5
// (refused) quietly but could not print its result exits 74.
func TestExitStdoutWriteFailureOverQuietCode(t *testing.T) {
	streams, _, errb := output.Test(false)
	streams.Out = failingWriter{}
	a := testFactory(streams, func(string) string { return "" })
	if code := run(t.Context(), a, []string{"probe", "--connect-timeout", "1", "http://127.0.0.1:1/"}); code != exitcode.IOError {
		t.Fatalf("exit %d, want 74; stderr %q", code, errb)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }
