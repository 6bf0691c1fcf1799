package waitcmd

import (
	"context"
	"encoding/json"
	"os"
	"slices"
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
			fk.F.Prober = func(pc context.Context, o *scheme.Options) probe.Result {
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

// Flags after -- belong to the command; the probe flags are the shared set.
func TestWaitFlagsSplitAtDash(t *testing.T) {
	o := parse(t, "--interval", "250ms", "--successes", "3", "--fail-open",
		"--statsd", "127.0.0.1:8125", "-H", "X-A: 1", "http://a/health", "http://b/health", "--", "echo", "--interval", "x")
	if !slices.Equal(o.URLs, []string{"http://a/health", "http://b/health"}) {
		t.Errorf("urls = %q", o.URLs)
	}
	if !slices.Equal(o.Command, []string{"echo", "--interval", "x"}) {
		t.Errorf("command = %q (flags after -- belong to the command)", o.Command)
	}
	if o.Interval != 250*time.Millisecond || o.Successes != 3 || !o.FailOpen || o.Statsd != "127.0.0.1:8125" {
		t.Errorf("options = %+v", o)
	}
	if o.Timeout != 30*time.Second || o.StatsdPrefix != "healthctl" {
		t.Errorf("defaults: timeout %v, prefix %q", o.Timeout, o.StatsdPrefix)
	}
	if !slices.Equal(o.Flags.Input().Headers, []string{"X-A: 1"}) {
		t.Errorf("probe flags are shared: headers %q", o.Flags.Input().Headers)
	}
}

// Every bad invocation is a usage error (exit 2) with a one-line message,
// from the flags or from Run's checks, before any probe.
func TestWaitUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--", "echo"},
		{"http://127.0.0.1:1/", "--"},
		{"--interval", "0", "http://127.0.0.1:1/"},
		{"--interval", "-1s", "http://127.0.0.1:1/"},
		{"--timeout", "0", "http://127.0.0.1:1/"},
		{"--successes", "0", "http://127.0.0.1:1/"},
		{"--statsd", "nohostport", "http://127.0.0.1:1/"},
		{"--statsd", "127.0.0.1:99999", "http://127.0.0.1:1/"},
		{"--statsd", "127.0.0.1:8125", "--statsd-prefix", "a:b", "http://127.0.0.1:1/"},
		{"ftp://127.0.0.1/"},
		{"http://127.0.0.1:1/", "--", "healthctl-no-such-command-anywhere"},
		{"--bypass", "--interval", "0", "http://127.0.0.1:1/"},
	} {
		fk := clitest.New(nil, classify.Pass)
		err := clitest.Parse(NewCmd(fk.F, nil), args...)
		if clitest.Code(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") || len(fk.Probed()) != 0 || fk.Out.Len() != 0 {
			t.Errorf("%q: %v (exit %d), probed %q, stdout %q; want exit 2, one line, no probe", args, err, clitest.Code(err), fk.Probed(), fk.Out)
		}
	}
}

// TestWaitUntilDownNeverUp: --until-down needs the URL seen up first. A
// URL that never answered (a typo: refused from the first probe) is not
// "down": the wait gives up at the ceiling with its own outcome's exit code
// (5, refused), one line says it was never seen up, and the command after
// -- (the traffic switch) does not run. Seen up, then refused: exit 0 and
// the command runs. --allow-never-up counts the refusals from the start.
func TestWaitUntilDownNeverUp(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		args    []string
		upFirst bool
		code    int
		ran     bool
		stderr  string
	}{
		{"never up", []string{"--until-down"}, false, exitcode.Refused, false,
			"healthctl: http://127.0.0.1:1/health never seen up within 300ms"},
		{"never up, JSON", []string{"--until-down", "-o", "json"}, false, exitcode.Refused, false, ""},
		{"seen up, then down", []string{"--until-down"}, true, 0, true, ""},
		{"never up, --allow-never-up", []string{"--until-down", "--allow-never-up"}, false, 0, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fk := clitest.New(nil, classify.Refused)
			isJSON := slices.Contains(c.args, "json")
			if isJSON {
				fk.F.Format = render.JSON
				c.args = slices.DeleteFunc(slices.Clone(c.args), func(a string) bool { return a == "-o" || a == "json" })
			}
			refused, pass := fk.F.Prober, clitest.New(nil, classify.Pass).F.Prober
			n := 0
			fk.F.Prober = func(ctx context.Context, o *scheme.Options) probe.Result {
				n++
				if c.upFirst && n == 1 {
					return pass(ctx, o)
				}
				return refused(ctx, o)
			}
			marker := dir + "/" + strings.ReplaceAll(c.name, " ", "_")
			args := append(append([]string{}, c.args...), "--timeout", "300ms", "--interval", "50ms",
				"http://127.0.0.1:1/health", "--", "touch", marker)
			err := Run(context.Background(), fk.F, parse(t, args...))
			if got := clitest.Code(err); got != c.code {
				t.Fatalf("exit %d (%v), want %d; stderr %q", got, err, c.code, fk.Err.String())
			}
			if _, statErr := os.Stat(marker); (statErr == nil) != c.ran {
				t.Errorf("the command after -- ran: %v, want %v", statErr == nil, c.ran)
			}
			if c.stderr != "" && (err == nil || !strings.HasPrefix("healthctl: "+err.Error(), c.stderr)) {
				t.Errorf("error %v, want it to start %q", err, c.stderr)
			}
			if isJSON {
				var j struct {
					Down     bool `json:"down"`
					ExitCode int  `json:"exit_code"`
				}
				if e := json.Unmarshal(fk.Out.Bytes(), &j); e != nil || j.Down || j.ExitCode != c.code {
					t.Errorf("JSON %+v (%v), want not down, exit_code %d", j, e, c.code)
				}
			}
		})
	}
}

// TestWaitAllowNeverUpNeedsUntilDown: --allow-never-up alone is a usage
// error naming it.
func TestWaitAllowNeverUpNeedsUntilDown(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	err := Run(context.Background(), fk.F, parse(t, "--allow-never-up", "http://127.0.0.1:1/"))
	if clitest.Code(err) != exitcode.Usage || err.Error() != "--allow-never-up true: only means something with --until-down" {
		t.Fatalf("got %v (exit %d)", err, clitest.Code(err))
	}
}
