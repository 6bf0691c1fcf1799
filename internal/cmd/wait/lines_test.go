package waitcmd

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// sequence is a prober whose first n answers are 503s (with retryAfter,
// when set) and the rest 200s.
func sequence(n int32, retryAfter time.Duration) func(context.Context, *scheme.Options) probe.Result {
	var calls atomic.Int32
	return func(_ context.Context, o *scheme.Options) probe.Result {
		if calls.Add(1) <= n {
			r := clitest.Result(o.URL, classify.Unreachable)
			if retryAfter > 0 {
				r.RetryAfter = &retryAfter
			}
			return r
		}
		return clitest.Result(o.URL, classify.Pass)
	}
}

// TestWaitTTYStatusLine: on a terminal the wait is one status line
// rewritten in place and cleared at the end; at 80 columns (the width
// assumed when unknown) the host stays visible.
func TestWaitTTYStatusLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fk := clitest.New(nil, classify.Pass)
		streams, out, errb := output.Test(true)
		fk.F.Streams = streams
		fk.F.Prober = sequence(2, 2*time.Second)
		if err := Run(t.Context(), fk.F, parse(t, "--interval", "50ms", "http://127.0.0.1:1/health")); err != nil {
			t.Fatalf("%v, stderr %q", err, errb)
		}
		if !strings.Contains(out.String(), "PASS") {
			t.Errorf("stdout %q, want the PASS line", out)
		}
		got := errb.String()
		for _, want := range []string{"\r\x1b[K", "waiting ", "127.0.0.1:1", "unreachable", "http_status 503"} {
			if !strings.Contains(got, want) {
				t.Errorf("stderr %q lacks %q", got, want)
			}
		}
		if strings.Contains(got, "\n") {
			t.Errorf("stderr %q: a terminal gets one line rewritten in place, no newlines", got)
		}
		if !strings.HasSuffix(got, "\r\x1b[K") {
			t.Errorf("stderr %q: the status line is cleared at the end", got)
		}
	})
}

// TestWaitLogLinesOnlyOnChange: without a terminal a line is written when
// the outcome changes, not at every attempt.
func TestWaitLogLinesOnlyOnChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fk := clitest.New(nil, classify.Pass)
		fk.F.Prober = sequence(6, 0)
		if err := Run(t.Context(), fk.F, parse(t, "--interval", "20ms", "http://127.0.0.1:1/health")); err != nil {
			t.Fatalf("%v, stderr %q", err, fk.Err)
		}
		lines := strings.Split(strings.TrimSpace(fk.Err.String()), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], "unreachable http_status 503 (attempt 1)") || !strings.Contains(lines[1], "pass ok 200 (attempt 7)") {
			t.Errorf("stderr lines %q, want one per change of outcome", lines)
		}
	})
}

// TestWaitQuiet: -q leaves only the final line (the root prints the error
// Run returns) and nothing on stdout.
func TestWaitQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fk := clitest.New(nil, classify.Unreachable)
		fk.F.Global.Quiet = true
		err := Run(t.Context(), fk.F, parse(t, "--timeout", "3s", "--interval", "500ms", "http://127.0.0.1:1/health"))
		if clitest.Code(err) != exitcode.Unreachable || fk.Out.Len() > 0 || fk.Err.Len() > 0 {
			t.Fatalf("exit %d (%v), stdout %q, stderr %q", clitest.Code(err), err, fk.Out, fk.Err)
		}
		if want := "no 2xx from http://127.0.0.1:1/health within 3s (last: unreachable, http_status after "; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("final line %q, want %q...", err.Error(), want)
		}
	})
}
