package waitcmd

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// TestWaitProgressWithoutTerminal (a 300ms interval: no probe starts on
// the same instant as a "still" line): a CI log (no terminal) gets a line at
// least every ProgressEvery while nothing changes — attempt, last outcome
// and reason, time left — for every URL still waited for, also one whose
// probe never completes; and the final line names every URL that was not
// healthy, the first (which decides the exit code) leading.
func TestWaitProgressWithoutTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fk := clitest.New(nil, classify.Unreachable)
		down := fk.F.Prober
		fk.F.Prober = func(ctx context.Context, o *scheme.Options) probe.Result {
			switch o.URL.Port() {
			case "2": // the connect hangs: no probe ever completes
				<-ctx.Done()
				return probe.Result{URL: o.URL.String(), Canceled: true}
			case "3":
				return clitest.Result(o.URL, classify.Pass)
			}
			return down(ctx, o)
		}
		err := Run(t.Context(), fk.F, parse(t, "--timeout", "35s", "--interval", "300ms",
			"http://127.0.0.1:1/health", "http://127.0.0.1:2/health", "http://127.0.0.1:3/health"))
		if clitest.Code(err) != exitcode.Unreachable {
			t.Fatalf("exit %d (%v), want %d", clitest.Code(err), err, exitcode.Unreachable)
		}
		want := "no 2xx from http://127.0.0.1:1/health within 35s (last: unreachable, http_status after 117 attempts); " +
			"also not healthy: http://127.0.0.1:2/health (no probe completed: timeout)"
		if err.Error() != want {
			t.Errorf("final line\n %q\nwant\n %q", err.Error(), want)
		}
		lines := strings.Split(strings.TrimSpace(fk.Err.String()), "\n")
		stamp := regexp.MustCompile(`^\[([0-9.]+)s\] `)
		prev, still := 0.0, 0
		for _, l := range lines {
			m := stamp.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("line without a time: %q", l)
			}
			at, _ := strconv.ParseFloat(m[1], 64)
			if at-prev > 10 {
				t.Errorf("%.1fs of silence before %q", at-prev, l)
			}
			prev = at
			if strings.Contains(l, " still ") {
				still++
			}
		}
		if 35-prev > 10 {
			t.Errorf("%.1fs of silence before the ceiling", 35-prev)
		}
		for _, w := range []string{
			"[10.0s] http://127.0.0.1:1/health still unreachable http_status 503 (attempt 34, 25.0s left)",
			"[10.0s] http://127.0.0.1:2/health still waiting (no probe completed, 25.0s left)",
			"[20.0s] http://127.0.0.1:1/health still unreachable http_status 503 (attempt 67, 15.0s left)",
		} {
			if !strings.Contains(fk.Err.String(), w+"\n") {
				t.Errorf("stderr lacks %q:\n%s", w, fk.Err.String())
			}
		}
		if still != 6 || strings.Contains(fk.Err.String(), ":3/health still") {
			t.Errorf("%d still lines, want 2 at each of 10s, 20s, 30s (none for the healthy URL):\n%s", still, fk.Err.String())
		}
	})
}

// TestWaitProgressQuietAfterChange: a change line restarts the count, so
// a log never gets a "still" line right after a line that said the same.
func TestWaitProgressQuietAfterChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fk := clitest.New(nil, classify.Unreachable)
		n := 0
		down := fk.F.Prober
		fk.F.Prober = func(ctx context.Context, o *scheme.Options) probe.Result {
			n++
			if n == 17 { // at 8s: refused once
				return clitest.Result(o.URL, classify.Refused)
			}
			return down(ctx, o)
		}
		Run(t.Context(), fk.F, parse(t, "--timeout", "15s", "--interval", "500ms", "http://127.0.0.1:1/health"))
		got := fk.Err.String()
		if strings.Contains(got, "[10.0s]") || !strings.Contains(got, "[8.0s] http://127.0.0.1:1/health refused") {
			t.Errorf("stderr:\n%s\nwant a change line at 8.0s and none at 10.0s", got)
		}
	})
}
