package draincmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/proc"
)

// parse runs drain-test's flag parsing (and its checks) up to runF.
func parse(t *testing.T, args ...string) *Options {
	return clitest.ParseOptions(t, NewCmd, args...)
}

func TestDrainFlags(t *testing.T) {
	o := parse(t, "--pre-drain", "2", "--shutdown-timeout", "10s", "--ready-flip-max", "500ms", "--signal", "INT",
		"--ready", "http://127.0.0.1:1/ready", "--live", "http://127.0.0.1:1/live", "--", "./server", "--port", "1")
	switch {
	case o.PreDrain != 2*time.Second, o.Shutdown != 10*time.Second, o.FlipMax != 500*time.Millisecond,
		o.Sig != syscall.SIGINT, o.Ready != "http://127.0.0.1:1/ready", o.Live != "http://127.0.0.1:1/live",
		strings.Join(o.Argv, " ") != "./server --port 1", o.PreDrainSource != "--pre-drain", o.ShutdownSource != "--shutdown-timeout":
		t.Fatalf("options %+v", o)
	}
}

// TestDrainRunLint: the lint is a run through the factory (its streams,
// its exit code), with P's source in the findings.
func TestDrainRunLint(t *testing.T) {
	m := filepath.Join(t.TempDir(), "deploy.yaml")
	if err := os.WriteFile(m, []byte(`apiVersion: v1
kind: Pod
metadata: {name: api}
spec:
  containers:
    - name: app
      image: api:1
      lifecycle: {preStop: {exec: {command: ["sleep", "1"]}}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	fk := clitest.New(nil, classify.Pass)
	err := Run(context.Background(), fk.F, parse(t, "--manifest", m, "--pre-drain", "5s"))
	if clitest.Code(err) != exitcode.DrainFailed || !strings.Contains(fk.Out.String(), "PRE_DRAIN_MS 5000 (--pre-drain)") {
		t.Fatalf("exit %d, stdout %q", clitest.Code(err), fk.Out)
	}
}

// TestDrainRunPollsThroughTheFactory: the health polls go through the
// factory's prober (here: a readiness that never flips, as a fake sees it).
func TestDrainRunPollsThroughTheFactory(t *testing.T) {
	if !proc.SignalsSupported {
		t.Skip("drain-test signals a process: not on this platform")
	}
	fk := clitest.New(nil, classify.Pass)
	fk.F.Global.Quiet = true
	err := Run(context.Background(), fk.F, parse(t, "--pre-drain", "100ms", "--shutdown-timeout", "1s", "--ready-timeout", "2s",
		"--ready", "http://127.0.0.1:1/ready", "--live", "http://127.0.0.1:1/live", "--", "sleep", "30"))
	if len(fk.Probed()) == 0 {
		t.Fatalf("no poll went through the factory's prober (err %v)", err)
	}
	if clitest.Code(err) != exitcode.DrainFailed || !strings.Contains(fk.Err.String(), "READINESS_NEVER_FLIPS") {
		t.Errorf("exit %d (%v), stderr %q", clitest.Code(err), err, fk.Err)
	}
}

func TestDrainTrafficAndSignalFlags(t *testing.T) {
	if !proc.SignalsSupported {
		t.Skip("signals by name: not on this platform")
	}
	o := parse(t, "--signal", "WINCH", "--traffic", "http://127.0.0.1:2/app", "--traffic-expect", "200,204",
		"--ready", "http://127.0.0.1:1/ready", "--live", "http://127.0.0.1:1/live", "--", "./server")
	// SIGWINCH is 28 on Linux and macOS (Windows has no such constant).
	if o.Sig != syscall.Signal(28) || o.trafficURL() != "http://127.0.0.1:2/app" || o.trafficOK == nil || !o.trafficOK(204) || o.trafficOK(410) {
		t.Fatalf("options %+v", o)
	}
	if o := parse(t, "--signal", "28", "--ready", "http://127.0.0.1:1/ready", "--live", "http://127.0.0.1:1/live", "--", "./s"); o.Sig != syscall.Signal(28) {
		t.Errorf("--signal 28: %v", o.Sig)
	}
	for _, bad := range [][]string{
		{"--signal", "KILL"}, {"--signal", "STOP"}, {"--signal", "BOGUS"},
		{"--traffic-expect", "200"}, // no traffic endpoint
		{"--traffic", "ftp://x/", "--inflight", "http://127.0.0.1:1/slow"},
		{"--traffic-expect", "abc", "--inflight", "http://127.0.0.1:1/slow"},
	} {
		fk := clitest.New(nil, classify.Pass)
		cmd := NewCmd(fk.F, func(context.Context, *Options) error { return nil })
		args := append(append([]string{}, bad...), "--ready", "http://127.0.0.1:1/ready", "--live", "http://127.0.0.1:1/live", "--", "./s")
		if err := clitest.Parse(cmd, args...); clitest.Code(err) != exitcode.Usage {
			t.Errorf("drain-test %v: exit %d (%v), want a usage error", bad, clitest.Code(err), err)
		}
	}
}
