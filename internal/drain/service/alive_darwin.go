package service

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// sZOMB is p_stat of a zombie in macOS's <sys/proc.h>.
const sZOMB = 5

// Alive reports whether pid is a running process (a zombie is not). macOS
// has no /proc: the state comes from sysctl kern.proc.pid. If that sysctl
// fails, a process that kill(pid, 0) still finds counts as alive (a zombie
// would then count as running until its parent reaps it).
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return true
	}
	if int(kp.Proc.P_pid) != pid {
		return false // no such process any more
	}
	return kp.Proc.P_stat != sZOMB
}
