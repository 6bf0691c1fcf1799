package service

import (
	"math"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/healthctl/healthctl/internal/proc"
)

// keepDescendants makes healthctl the child subreaper of everything it
// starts: a process that double-forks or calls setsid (a daemonising
// launcher, a service under tini) is re-parented to healthctl, not to
// PID 1, so it can still be found and killed.
func keepDescendants() {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// childAttr makes the child die with healthctl, SIGKILL included.
func childAttr(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// descendants are the processes below healthctl: what it started and
// everything they started, re-parented ones included (healthctl is their
// subreaper).
func descendants() []proc.Stat {
	return proc.Descendants(proc.Table(), os.Getpid(), math.MaxInt)
}

// othersLeft counts the running descendants other than main.
func othersLeft(main int) int {
	n := 0
	for _, p := range descendants() {
		if p.PID != main && !p.Zombie {
			n++
		}
	}
	return n
}

// killTree kills every descendant of healthctl (main's process group is
// killed by the caller; main itself is reaped by its own Wait) and returns
// once none runs and the re-parented ones are reaped, or after limit. It
// returns how many still ran then.
func killTree(main int, limit time.Duration) int {
	self := os.Getpid()
	end := time.Now().Add(limit)
	for {
		running := 0
		for _, p := range descendants() {
			switch {
			case p.Zombie && p.PPID == self && p.PID != main:
				// Re-parented to healthctl: reap it (main is os/exec's).
				var ws unix.WaitStatus
				_, _ = unix.Wait4(p.PID, &ws, unix.WNOHANG, nil)
			case !p.Zombie:
				running++
				_ = syscall.Kill(p.PID, syscall.SIGKILL)
			}
		}
		if running == 0 || time.Now().After(end) {
			return running
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// leftAlive says the service or processes it started still run: main
// itself (a run cut short), or a running descendant (healthctl is their subreaper, so its group's members
// are among them). A zombie is not one: a worker its master killed on the
// way out is dead, only not yet reaped.
func leftAlive(main int) bool { return Alive(main) || othersLeft(main) > 0 }
