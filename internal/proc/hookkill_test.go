//go:build unix

package proc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone reports whether pid no longer runs (a zombie re-parented to an init
// that does not reap counts as gone: it runs nothing).
func gone(pid int) bool {
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
	}
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

func waitGone(pid int, d time.Duration) bool {
	end := time.Now().Add(d)
	for !gone(pid) {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// TestRunTimeoutLeavesNothing is the reap race, 50 times: the hook's shell
// dies at SIGTERM while its grandchildren ignore SIGTERM — one holding the
// captured pipe (Wait is delayed by WaitDelay, as long as the grace: the
// race at its closest), one not (the reap wins at once) — whichever wins,
// both must be gone; so must one that left the group with setsid (Linux:
// the descendants are killed too).
func TestRunTimeoutLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	n := 50
	if testing.Short() {
		n = 5
	}
	setsid := ""
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/usr/bin/setsid"); err == nil {
			setsid = "/usr/bin/setsid"
		}
	}
	for i := range n {
		pidf, pidf2, pidf3 := filepath.Join(dir, fmt.Sprint(i)), filepath.Join(dir, fmt.Sprint(i, "s")), filepath.Join(dir, fmt.Sprint(i, "n"))
		line := fmt.Sprintf(`sh -c 'trap "" TERM; echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 30' & `, pidf, pidf, pidf)
		line += fmt.Sprintf(`sh -c 'trap "" TERM; echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 30' >/dev/null 2>&1 & `, pidf3, pidf3, pidf3)
		if setsid != "" {
			line += fmt.Sprintf(`%s sh -c 'trap "" TERM; echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 30' & `, setsid, pidf2, pidf2, pidf2)
		}
		line += `while :; do sleep 0.01; done`
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			// The timeout: once the grandchildren have said who they are.
			for range 500 {
				_, e1 := os.Stat(pidf)
				_, e2 := os.Stat(pidf2)
				_, e3 := os.Stat(pidf3)
				if e1 == nil && e3 == nil && (setsid == "" || e2 == nil) {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			cancel()
		}()
		res, err := Run(ctx, Spec{Argv: Shell(line), Grace: 100 * time.Millisecond}, time.Minute, 1024)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut {
			t.Fatalf("run %d: not ended by the deadline: %+v", i, res)
		}
		for _, f := range []string{pidf, pidf2, pidf3} {
			if f == pidf2 && setsid == "" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if !waitGone(pid, 2*time.Second) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("run %d: grandchild %d (%s) outlived the hook", i, pid, filepath.Base(f))
			}
		}
	}
}

// TestRunNormalExitLeavesNothing: a hook that exits 0 leaving a background
// process (holding no pipe) in its group does not leave it running.
func TestRunNormalExitLeavesNothing(t *testing.T) {
	pidf := filepath.Join(t.TempDir(), "pid")
	res, err := Run(context.Background(), Spec{Argv: Shell(fmt.Sprintf(`sleep 30 >/dev/null 2>&1 & echo $! > %s; exit 0`, pidf))}, 10*time.Second, 1024)
	if err != nil || res.Status.ExitCode() != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	b, _ := os.ReadFile(pidf)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 || !waitGone(pid, 2*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("background process %d outlived the hook", pid)
	}
}
