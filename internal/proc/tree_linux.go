package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procID names a process by its pid and its start time (in clock ticks
// since boot), so a pid the kernel has since given to another process is
// never killed in its place.
type procID struct {
	pid   int
	start uint64
}

// statOf reads a process's parent and start time from /proc/PID/stat.
func statOf(pid int) (ppid int, start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) S ppid …": comm may hold spaces and parentheses. After
	// it, field 3 (state) is f[0]; field 22 (starttime) is f[19].
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	start, _ = strconv.ParseUint(f[19], 10, 64)
	return ppid, start, true
}

// descendantsOf lists the running processes below root (not root itself),
// read from /proc: a hook's children and theirs, also those that called
// setsid and so left its process group.
func descendantsOf(root int) []procID {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := map[int][]procID{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, start, ok := statOf(pid); ok {
			kids[ppid] = append(kids[ppid], procID{pid, start})
		}
	}
	var out []procID
	queue := []int{root}
	for len(queue) > 0 && len(out) < 100000 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			out = append(out, k)
			queue = append(queue, k.pid)
		}
	}
	return out
}

// killProcs sends SIGKILL to each process that still runs with the same
// start time.
func killProcs(ids []procID) {
	for _, p := range ids {
		if _, start, ok := statOf(p.pid); ok && start == p.start {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

// DieWithParent makes the kernel SIGKILL the child when healthctl dies,
// SIGKILL included (Linux's parent-death signal): nothing it started
// outlives it, whatever killed it.
func DieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
