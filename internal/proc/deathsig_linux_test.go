package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play healthctl: with HCPROC_DEATHSIG_PIDFILE
// set it runs one hook the way watch does (DieWithParent) and waits to be
// killed.
func TestMain(m *testing.M) {
	if f := os.Getenv("HCPROC_DEATHSIG_PIDFILE"); f != "" {
		spec := Spec{Argv: Shell("echo $$ > " + f + ".tmp && mv " + f + ".tmp " + f + " && exec sleep 60"), Attr: DieWithParent}
		_, _ = Run(context.Background(), spec, time.Minute, 1<<10)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A hook started with DieWithParent dies with healthctl even when healthctl
// is SIGKILLed and gets no chance to clean up.
func TestHookDiesWithSIGKILLedParent(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "hook.pid")
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), "HCPROC_DEATHSIG_PIDFILE="+pidfile)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; {
		if b, err := os.ReadFile(pidfile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			parent.Process.Kill()
			t.Fatal("the hook never wrote its pid")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if gone(pid) {
		t.Fatalf("hook %d is not running before the kill", pid)
	}
	parent.Process.Kill()
	parent.Wait()
	for deadline := time.Now().Add(10 * time.Second); !gone(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("hook %d still runs 10s after healthctl was SIGKILLed", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
