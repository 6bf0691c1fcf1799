package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/fixture/stackfix"
)

// TestWaitHealthyPostgresStarts: `wait-healthy postgres://…` against a real
// PostgreSQL held starting up (57P03) returns within one --interval of the
// server accepting connections, judged by pg_isready polled beside it (the
// first moment pg_isready says "accepting connections"), not by what
// healthctl says of itself. The bound is one interval plus a generous
// allowance for a loaded machine; the measured lag is logged.
func TestWaitHealthyPostgresStarts(t *testing.T) {
	besideScripts(t)
	if testing.Short() {
		t.Skip("-short: runs postgres for a few seconds")
	}
	if !stackfix.Installed(t, "pg_isready", kindsDeps) {
		t.SkipNow()
	}
	hc, err := exec.LookPath("healthctl")
	if err != nil {
		t.Fatalf("healthctl (this test binary, installed by testscript.Main) not on PATH: %v", err)
	}
	logPath := filepath.Join(t.TempDir(), "postgres.log")
	pg := startPG(testFixtureEnv(t), pgOptions{starting: true, log: logPath})
	port := strconv.Itoa(pg.port)
	isReady := func() int {
		err := exec.Command("pg_isready", "-h", "127.0.0.1", "-p", port, "-t", "2").Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}
	if c := isReady(); c != 1 {
		t.Fatalf("pg_isready exits %d before the start, want 1 (rejecting: starting up)", c)
	}

	const interval = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out strings.Builder
	wait := exec.CommandContext(ctx, hc, "wait-healthy", "-o", "json", "--interval", interval.String(), "--timeout", "60s", "postgres://127.0.0.1:"+port)
	wait.Stdout = &out
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan time.Time, 1)
	var waitErr error
	go func() { waitErr = wait.Wait(); done <- time.Now() }()

	// Let it see the server starting up (pg_isready above was the first
	// refusal the log shows), then let the server start.
	for n := 0; n < 2; n = strings.Count(readLog(logPath), "the database system is starting up") {
		time.Sleep(20 * time.Millisecond)
		if ctx.Err() != nil {
			t.Fatal("wait-healthy never connected while the server was starting up")
		}
	}
	if err := os.Mkdir(pg.goFile, 0o755); err != nil {
		t.Fatal(err)
	}
	var ready time.Time
	for ready.IsZero() {
		select {
		case end := <-done:
			t.Fatalf("wait-healthy returned (%v) before pg_isready said accepting connections (%s)", waitErr, end)
		default:
		}
		if isReady() == 0 {
			ready = time.Now()
		}
	}
	end := <-done
	if waitErr != nil {
		t.Fatalf("wait-healthy: %v\n%s", waitErr, out.String())
	}
	lag := end.Sub(ready)
	t.Logf("wait-healthy returned %s after pg_isready first said accepting (interval %s)", lag, interval)
	if lag > interval+1500*time.Millisecond {
		t.Errorf("wait-healthy returned %s after the server accepted connections, more than one interval (%s) and the allowance", lag, interval)
	}
	if !strings.Contains(out.String(), `"outcome":"pass"`) {
		t.Errorf("wait-healthy's JSON has no pass:\n%s", out.String())
	}
}

// readLog is the server's log so far.
func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
