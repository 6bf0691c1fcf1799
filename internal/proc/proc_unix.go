//go:build unix

package proc

import (
	"errors"
	"os"
	"syscall"
)

// SignalsSupported says whether POSIX signals (SIGTERM, SIGUSR1…) can be
// sent to a child or another process on this platform.
const SignalsSupported = true

const (
	sigUSR1 = syscall.SIGUSR1
	sigUSR2 = syscall.SIGUSR2
)

// moreSignals are the other POSIX signals a service may take as its stop
// signal (WINCH is Apache httpd's graceful stop).
func moreSignals() map[string]syscall.Signal {
	return map[string]syscall.Signal{
		"ABRT": syscall.SIGABRT, "ALRM": syscall.SIGALRM, "BUS": syscall.SIGBUS, "CHLD": syscall.SIGCHLD,
		"CONT": syscall.SIGCONT, "FPE": syscall.SIGFPE, "ILL": syscall.SIGILL, "IO": syscall.SIGIO,
		"PIPE": syscall.SIGPIPE, "PROF": syscall.SIGPROF, "SEGV": syscall.SIGSEGV, "STOP": syscall.SIGSTOP,
		"SYS": syscall.SIGSYS, "TRAP": syscall.SIGTRAP, "TSTP": syscall.SIGTSTP, "TTIN": syscall.SIGTTIN,
		"TTOU": syscall.SIGTTOU, "URG": syscall.SIGURG, "VTALRM": syscall.SIGVTALRM, "WINCH": syscall.SIGWINCH,
		"XCPU": syscall.SIGXCPU, "XFSZ": syscall.SIGXFSZ,
	}
}

// Shell returns the Argv that runs line with /bin/sh -c, as cron and
// Compose's shell form do.
func Shell(line string) []string { return []string{"/bin/sh", "-c", line} }

// sysProcAttr starts the child in a new process group.
func sysProcAttr([]string) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// childSys is empty on Unix: the process group is the child's pid.
type childSys struct{}

func started(*Child) childSys { return childSys{} }

// signal sends sig to the child process itself.
func (c *Child) signal(sig syscall.Signal) error { return c.cmd.Process.Signal(sig) }

// signalGroup sends sig to the child's whole process group.
func (c *Child) signalGroup(sig syscall.Signal) error {
	err := syscall.Kill(-c.Pid(), sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
