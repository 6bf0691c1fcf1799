//go:build unix

package proc

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string
		code int
	}{
		{"exit 0", "exit status 0", 0},
		{"exit 3", "exit status 3", 3},
		{"kill -TERM $$", "killed by SIGTERM", 143},
	} {
		c, err := Start(Spec{Argv: Shell(tc.line)})
		if err != nil {
			t.Fatal(err)
		}
		st := c.Status()
		if st.String() != tc.want || st.ExitCode() != tc.code {
			t.Errorf("%q: got %s (%d), want %s (%d)", tc.line, st, st.ExitCode(), tc.want, tc.code)
		}
	}
}

func TestStartMissing(t *testing.T) {
	if _, err := Start(Spec{Argv: []string{"/nonexistent/healthctl-test"}}); err == nil {
		t.Fatal("want an error for a missing program")
	}
	if _, err := Start(Spec{}); err == nil {
		t.Fatal("want an error for no command")
	}
}

func TestRunCapturesAndBounds(t *testing.T) {
	res, err := Run(context.Background(), Spec{Argv: Shell("echo out; echo err >&2; head -c 5000 /dev/zero; exit 4"), Env: []string{"X_TEST=1"}}, 10*time.Second, 100)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status.ExitCode() != 4 || !res.Truncated || len(res.Output) != 100 || !strings.Contains(res.Output, "out") {
		t.Fatalf("got %+v", res)
	}
}

func TestRunTimeoutKillsGroup(t *testing.T) {
	// The shell ignores TERM and its background child sleeps: both must go.
	start := time.Now()
	res, err := Run(context.Background(), Spec{Argv: Shell("trap '' TERM; sleep 30 & sleep 30")}, 200*time.Millisecond, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Status.Signal != syscall.SIGKILL {
		t.Fatalf("got %+v", res)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("took %v", el)
	}
}

func TestForegroundForwardsOnceAndKeepsStatus(t *testing.T) {
	// The child exits 0 on TERM: healthctl must report 0, not 143.
	dir := t.TempDir()
	c, err := Start(Spec{Argv: Shell("trap 'echo got >> " + dir + "/n; exit 0' TERM; echo ready > " + dir + "/r; while :; do sleep 0.05; done")})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(dir + "/r"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("child never got ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sigs := make(chan os.Signal, 2)
	sigs <- syscall.SIGTERM
	sigs <- syscall.SIGTERM
	st := c.Foreground(sigs, 10*time.Second)
	if st.ExitCode() != 0 {
		t.Fatalf("got %s", st)
	}
	b, _ := os.ReadFile(dir + "/n")
	if strings.Count(string(b), "got") != 1 {
		t.Fatalf("child got the signal %d times", strings.Count(string(b), "got"))
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]syscall.Signal{"TERM": syscall.SIGTERM, "sigint": syscall.SIGINT, "15": syscall.SIGTERM, "KILL": syscall.SIGKILL, "WINCH": syscall.SIGWINCH, "SIGWINCH": syscall.SIGWINCH, "28": syscall.Signal(28), "40": syscall.Signal(40)} {
		if got, err := ParseSignal(in); err != nil || got != want {
			t.Errorf("%q: got %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "FOO", "999", "1x", "0", "-1"} {
		if _, err := ParseSignal(in); err == nil {
			t.Errorf("%q: want an error", in)
		}
	}
}

func TestSignalsSupportedOnUnix(t *testing.T) {
	if !SignalsSupported {
		t.Fatal("SignalsSupported is false on a Unix")
	}
	if !errors.Is(ErrUnsupported, errors.ErrUnsupported) {
		t.Fatal("ErrUnsupported does not match errors.ErrUnsupported")
	}
}
