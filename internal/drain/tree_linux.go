package drain

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// proc is one row of the process table.
type procEntry struct {
	pid, ppid int
	zombie    bool
}

// processTable reads pid, ppid and state of every process from /proc.
func processTable() []procEntry {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procEntry
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) S ppid ...": comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		out = append(out, procEntry{pid: pid, ppid: ppid, zombie: f[0] == "Z" || f[0] == "X"})
	}
	return out
}

// descendants are the processes below healthctl: what it started and
// everything they started, re-parented ones included (healthctl is their
// subreaper).
func descendants() []procEntry {
	self := os.Getpid()
	tab := processTable()
	kids := map[int][]procEntry{}
	for _, p := range tab {
		kids[p.ppid] = append(kids[p.ppid], p)
	}
	var out []procEntry
	queue := []int{self}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			out = append(out, k)
			queue = append(queue, k.pid)
		}
	}
	return out
}

// othersLeft counts the running descendants other than main.
func othersLeft(main int) int {
	n := 0
	for _, p := range descendants() {
		if p.pid != main && !p.zombie {
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
			case p.zombie && p.ppid == self && p.pid != main:
				// Re-parented to healthctl: reap it (main is os/exec's).
				var ws unix.WaitStatus
				_, _ = unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
			case !p.zombie:
				running++
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
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
