package waitcmd

import (
	"context"
	"encoding/json"
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
)

// parse runs wait-healthy's flag parsing up to runF and returns the options.
func parse(t *testing.T, args ...string) *Options {
	return clitest.ParseOptions(t, NewCmd, args...)
}

func TestWaitFlags(t *testing.T) {
	o := parse(t, "--interval", "2", "--timeout", "1m", "--successes", "3", "--fail-open", "--bypass",
		"--respect-retry-after", "http://a/health", "--", "echo", "--interval", "x")
	switch {
	case strings.Join(o.URLs, " ") != "http://a/health",
		strings.Join(o.Command, " ") != "echo --interval x",
		o.Interval != 2*time.Second, o.Timeout != time.Minute, o.Successes != 3,
		!o.FailOpen, !o.Bypass, !o.RespectRetryAfter:
		t.Fatalf("options %+v", o)
	}
}

func TestWaitRunHealthy(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	if err := Run(context.Background(), fk.F, parse(t, "http://127.0.0.1:1/health")); err != nil {
		t.Fatalf("got %v", err)
	}
	if !strings.HasPrefix(fk.Out.String(), "PASS ok http://127.0.0.1:1/health 200") {
		t.Errorf("stdout %q", fk.Out.String())
	}
}

// TestWaitRunExit1JSON: the JSON's exit_code (and each last result's) is
// the code the process exits with under --exit-1.
func TestWaitRunExit1JSON(t *testing.T) {
	for _, exit1 := range []bool{false, true} {
		fk := clitest.New(nil, classify.Refused)
		fk.F.Format, fk.F.Exit1 = render.JSON, exit1
		err := Run(context.Background(), fk.F, parse(t, "--timeout", "150ms", "http://127.0.0.1:1/health"))
		var j struct {
			ExitCode int `json:"exit_code"`
			Last     []struct {
				ExitCode int `json:"exit_code"`
			} `json:"last"`
		}
		if e := json.Unmarshal(fk.Out.Bytes(), &j); e != nil || len(j.Last) != 1 {
			t.Fatalf("%v: %q", e, fk.Out.String())
		}
		want := exitcode.Refused
		if exit1 {
			want = exitcode.Unreachable
		}
		if clitest.Code(err) != want || j.ExitCode != want || j.Last[0].ExitCode != want {
			t.Errorf("--exit-1 %v: process %d, exit_code %d, last %d; want %d", exit1, clitest.Code(err), j.ExitCode, j.Last[0].ExitCode, want)
		}
	}
}

func TestWaitRunBadValueNamesItsFlag(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	err := Run(context.Background(), fk.F, parse(t, "--interval", "0", "http://127.0.0.1:1/"))
	if clitest.Code(err) != exitcode.Usage || err.Error() != "--interval 0s: must be positive" {
		t.Fatalf("got %v (exit %d)", err, clitest.Code(err))
	}
}

func TestWaitRunJSONWriteError(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	fk.F.Format = render.JSON
	fk.F.Streams.Out = clitest.FailingWriter{Err: syscall.EPIPE}
	err := Run(context.Background(), fk.F, parse(t, "http://127.0.0.1:1/"))
	if !output.IsWriteFailure(err) {
		t.Fatalf("got %v, want a write failure", err)
	}
}

// TestWaitSignalBeforeCommand: a signal that lands once the wait is over
// but before the command after -- starts (after the last probe passed;
// already in with --bypass): the command is not started, one line says
// so, and the JSON's exit_code is the signal's, the code the process
// exits with (not 0).
func TestWaitSignalBeforeCommand(t *testing.T) {
	for _, c := range []struct {
		name   string
		bypass bool
		sig    syscall.Signal
		code   int
	}{{"after the last probe", false, syscall.SIGTERM, 143}, {"--bypass", true, syscall.SIGINT, 130}} {
		fk := clitest.New(nil, classify.Pass)
		fk.F.Format = render.JSON
		ctx, cancel := context.WithCancel(context.Background())
		signal := func() { fk.F.SetSignal(c.sig); cancel() }
		args := []string{"http://127.0.0.1:1/health", "--", "true"}
		if c.bypass {
			signal()
			args = append([]string{"--bypass"}, args...)
		} else {
			pass := fk.F.Prober
			fk.F.Prober = func(pc context.Context, o *probe.Options) probe.Result {
				defer signal()
				return pass(pc, o)
			}
		}
		err := Run(ctx, fk.F, parse(t, args...))
		cancel()
		var j struct {
			Healthy  bool `json:"healthy"`
			Bypassed bool `json:"bypassed"`
			ExitCode int  `json:"exit_code"`
		}
		if e := json.Unmarshal(fk.Out.Bytes(), &j); e != nil {
			t.Fatalf("%s: %v: %q", c.name, e, fk.Out.String())
		}
		if clitest.Code(err) != c.code || j.ExitCode != c.code || j.Healthy == c.bypass || j.Bypassed != c.bypass {
			t.Errorf("%s: process %d, JSON %+v; want %d both", c.name, clitest.Code(err), j, c.code)
		}
		if !strings.Contains(fk.Err.String(), "before the command after -- was started") {
			t.Errorf("%s: stderr %q", c.name, fk.Err.String())
		}
	}
}
