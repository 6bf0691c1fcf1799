package proc

import "syscall"

// procID names a process by its pid and its start time, so a pid the
// kernel has since given to another process is never killed in its place.
type procID struct {
	pid   int
	start uint64
}

// descendantsOf lists the running processes below root (not root itself),
// read from /proc: a hook's children and theirs, also those that called
// setsid and so left its process group.
func descendantsOf(root int) []procID {
	var out []procID
	for _, p := range Descendants(Table(), root, 100000) {
		if !p.Zombie {
			out = append(out, procID{p.PID, p.Start})
		}
	}
	return out
}

// killProcs sends SIGKILL to each process that still runs with the same
// start time.
func killProcs(ids []procID) {
	for _, p := range ids {
		if st, err := ReadStat(p.pid); err == nil && !st.Zombie && st.Start == p.start {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

// DieWithParent makes the kernel SIGKILL the child when healthctl dies,
// SIGKILL included (Linux's parent-death signal): nothing it started
// outlives it, whatever killed it.
func DieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
