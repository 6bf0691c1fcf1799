package probecmd

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/scheme"
)

// parse runs probe's flag parsing up to runF and returns the options.
func parse(t *testing.T, args ...string) *Options {
	return clitest.ParseOptions(t, NewCmd, args...)
}

func TestProbeFlags(t *testing.T) {
	o := parse(t, "-m", "3", "-H", "X-A: 1", "--age", "10m", "--failure-threshold", "2", "http://a/health", "http://b/health")
	if strings.Join(o.URLs, " ") != "http://a/health http://b/health" {
		t.Errorf("URLs %q", o.URLs)
	}
	in := o.Flags.Input()
	if in.MaxTime != 3*time.Second || strings.Join(in.Headers, "|") != "X-A: 1" {
		t.Errorf("probe flags: max-time %v, headers %q", in.MaxTime, in.Headers)
	}
	s, err := o.Policy.Settings()
	if err != nil || s.FailureThreshold != 2 {
		t.Errorf("policy: %+v, %v", s, err)
	}
	if age, known, _, _ := o.Policy.AgeAt(clitest.Now); !known || age != 10*time.Minute {
		t.Errorf("age %v known %v", age, known)
	}
}

func TestProbeFlagsMissingURL(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	err := clitest.Parse(NewCmd(fk.F, func(context.Context, *Options) error { return nil }))
	if clitest.Code(err) != exitcode.Usage || !strings.Contains(err.Error(), "missing URL") {
		t.Fatalf("got %v (exit %d)", err, clitest.Code(err))
	}
}

func TestProbeRunThroughTheFactory(t *testing.T) {
	fk := clitest.New(nil, classify.Refused)
	o := parse(t, "http://127.0.0.1:1/health")
	err := Run(context.Background(), fk.F, o)
	if clitest.Code(err) != exitcode.Refused {
		t.Fatalf("exit %d (%v), want 5", clitest.Code(err), err)
	}
	if got := fk.Probed(); len(got) != 1 || got[0] != "http://127.0.0.1:1/health" {
		t.Errorf("probed %q", got)
	}
	if !strings.HasPrefix(fk.Out.String(), "FAIL refused conn_refused http://127.0.0.1:1/health") {
		t.Errorf("stdout %q", fk.Out.String())
	}
}

// TestProbeExit1JSON: with --exit-1 the JSON's exit_code is the 1 the
// process exits with, not the outcome's 5.
func TestProbeExit1JSON(t *testing.T) {
	fk := clitest.New(nil, classify.Refused)
	fk.F.Format, fk.F.Exit1 = render.JSON, true
	err := Run(context.Background(), fk.F, parse(t, "http://127.0.0.1:1/"))
	var j struct {
		ExitCode int `json:"exit_code"`
	}
	if e := json.Unmarshal(fk.Out.Bytes(), &j); e != nil {
		t.Fatalf("%v: %q", e, fk.Out.String())
	}
	if clitest.Code(err) != exitcode.Unreachable || j.ExitCode != exitcode.Unreachable {
		t.Fatalf("process exit %d, JSON exit_code %d: want 1 and 1", clitest.Code(err), j.ExitCode)
	}
}

// TestProbeJSONWriteError: stdout that cannot be written is healthctl's own
// I/O failure (exit 74), not a usage error.
func TestProbeJSONWriteError(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	fk.F.Format = render.JSON
	fk.F.Streams.Out = clitest.FailingWriter{Err: syscall.ENOSPC}
	err := Run(context.Background(), fk.F, parse(t, "http://127.0.0.1:1/"))
	var we *output.WriteError
	if !output.IsWriteFailure(err) || !errors.As(err, &we) {
		t.Fatalf("got %v, want a *output.WriteError", err)
	}
}

// TestProbeAllAddressesEscapesServerText: an address's error text is the
// server's (or its TLS stack's) words: escaped, never raw, in the text.
func TestProbeAllAddressesEscapesServerText(t *testing.T) {
	fk := clitest.New(nil, classify.Unreachable)
	evil := "tls: alert \x1b]0;pwned\x07\x1b[2J\r\nFAIL forged"
	fk.F.Prober = func(_ context.Context, o *scheme.Options) probe.Result {
		u := o.URL
		a := clitest.Result(u, classify.Unreachable)
		a.Address, a.Error, a.HTTPStatus = "127.0.0.1:1", evil, 0
		b := clitest.Result(&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}, classify.Pass)
		b.Address = "127.0.0.2:1"
		r := a
		r.Addresses, r.Error = []probe.Result{a, b}, "1 of 2 addresses failed: "+evil
		return r
	}
	_ = Run(context.Background(), fk.F, parse(t, "http://app.invalid:1/"))
	out := fk.Out.String()
	if strings.ContainsAny(out, "\x1b\x07\r") || strings.Contains(out, "\nFAIL forged") {
		t.Fatalf("server text reached stdout raw: %q", out)
	}
	if !strings.Contains(out, `\x1b]0;pwned`) {
		t.Errorf("the error is not shown escaped: %q", out)
	}
}

// TestProbeDegradedExitCode: a degraded pass exits 10 alone; with several
// URLs the first that did not pass decides, and 10 only when every URL
// passed; --exit-1 folds it to 1.
func TestProbeDegradedExitCode(t *testing.T) {
	results := map[string]classify.Reason{
		"http://ok/": classify.OK, "http://deg/": classify.Degraded, "http://down/": classify.ConnRefused,
	}
	for _, tc := range []struct {
		urls  []string
		exit1 bool
		want  int
	}{
		{[]string{"http://deg/"}, false, exitcode.Degraded},
		{[]string{"http://ok/", "http://deg/"}, false, exitcode.Degraded},
		{[]string{"http://deg/", "http://down/"}, false, exitcode.Refused},
		{[]string{"http://down/", "http://deg/"}, false, exitcode.Refused},
		{[]string{"http://ok/"}, false, exitcode.Pass},
		{[]string{"http://deg/"}, true, exitcode.Unreachable},
	} {
		fk := clitest.New(nil, classify.Pass)
		fk.F.Exit1 = tc.exit1
		fk.F.Prober = func(_ context.Context, o *scheme.Options) probe.Result {
			r := results[o.URL.String()]
			return probe.Result{URL: o.URL.String(), Outcome: r.Outcome(), Reason: r, Started: clitest.Now}
		}
		err := Run(context.Background(), fk.F, parse(t, tc.urls...))
		if got := clitest.Code(err); got != tc.want {
			t.Errorf("%v (--exit-1 %v): exit %d, want %d", tc.urls, tc.exit1, got, tc.want)
		}
	}
}
