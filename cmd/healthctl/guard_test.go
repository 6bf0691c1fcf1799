package main

import (
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/exitcode"
)

// TestGuardRunsCrashCleanups: a panic on the main goroutine runs the same
// cleanups as one on any other goroutine (the child of -- CMD is killed),
// prints one line and is exit 70.
func TestGuardRunsCrashCleanups(t *testing.T) {
	ran := false
	remove := crash.OnCrash(func() { ran = true })
	defer remove()
	var w strings.Builder
	code := guard(&w, func() int { panic("injected on the main goroutine") })
	if code != exitcode.Internal {
		t.Errorf("exit %d, want %d", code, exitcode.Internal)
	}
	if !ran {
		t.Error("the crash cleanup did not run")
	}
	if !strings.Contains(w.String(), "internal error") || strings.Count(w.String(), "\n") != 1 {
		t.Errorf("got %q, want one internal-error line", w.String())
	}
}
