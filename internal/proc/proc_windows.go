//go:build windows

package proc

import (
	"os"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// SignalsSupported says whether POSIX signals (SIGTERM, SIGUSR1…) can be
// sent to a child or another process on this platform. Windows has none:
// Child.Signal returns ErrUnsupported for anything but SIGKILL, and
// drain-test, whose whole point is the service's reaction to a signal,
// refuses to run.
const SignalsSupported = false

// Windows' syscall package has no SIGUSR1/2; these values exist only so
// that --signal USR1 parses and is then refused as unsupported, not as an
// unknown name.
const (
	sigUSR1 = syscall.Signal(0xa)
	sigUSR2 = syscall.Signal(0xc)
)

// moreSignals: Windows has no others to name (and sends none).
func moreSignals() map[string]syscall.Signal { return nil }

// Shell returns the Argv that runs line with cmd.exe /d /s /c (%ComSpec%),
// the Windows counterpart of /bin/sh -c. Start passes such a line to
// cmd.exe verbatim (cmd.exe does not parse the C runtime's quoting that Go
// would otherwise apply).
func Shell(line string) []string {
	sh := os.Getenv("ComSpec")
	if sh == "" {
		sh = "cmd.exe"
	}
	return []string{sh, "/d", "/s", "/c", line}
}

// isShell reports whether argv came from Shell.
func isShell(argv []string) bool {
	return len(argv) == 5 && argv[1] == "/d" && argv[2] == "/s" && argv[3] == "/c" &&
		strings.TrimSuffix(strings.ToLower(baseName(argv[0])), ".exe") == "cmd"
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `\/`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// sysProcAttr starts the child in a new console process group: the
// console's Ctrl-C does not reach it behind healthctl's back (as Setpgid
// does on Unix), and Ctrl-Break can be sent to the group alone.
func sysProcAttr(argv []string) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	if isShell(argv) {
		a.CmdLine = `"` + argv[0] + `" /d /s /c "` + argv[4] + `"`
	}
	return a
}

// childSys holds the job object the child was put in right after it
// started, so Kill ends what it started too (the Windows counterpart of
// killing a process group). Zero when the job could not be made: then only
// the child itself is killed.
type childSys struct {
	job windows.Handle
}

// started puts the child in a new job object. Processes the child started
// in the instant before (between CreateProcess and the assignment) are not
// in it; nothing is killed when healthctl itself dies (no
// KILL_ON_JOB_CLOSE: a child that exited normally may leave helpers behind,
// as on Unix).
func started(c *Child) childSys {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return childSys{}
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(c.Pid()))
	if err != nil {
		windows.CloseHandle(job)
		return childSys{}
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(job)
		return childSys{}
	}
	runtime.AddCleanup(c, func(j windows.Handle) { windows.CloseHandle(j) }, job)
	return childSys{job: job}
}

// signal sends sig to the child itself: only SIGKILL (TerminateProcess)
// exists on Windows.
func (c *Child) signal(sig syscall.Signal) error {
	if sig != syscall.SIGKILL {
		return ErrUnsupported
	}
	return c.cmd.Process.Kill()
}

// signalGroup stands in for a signal to the process group: SIGKILL
// terminates the job (the child and what it started), any other signal is
// sent as a console Ctrl-Break to the child's process group (a Go program
// sees it as os.Interrupt, Node as SIGBREAK). Ctrl-Break reaches the group
// only when it shares healthctl's console; otherwise the error is returned
// and the callers' grace period ends in a kill.
func (c *Child) signalGroup(sig syscall.Signal) error {
	select {
	case <-c.done:
		if sig != syscall.SIGKILL || c.sys.job == 0 {
			return os.ErrProcessDone
		}
	default:
	}
	if sig == syscall.SIGKILL {
		var err error
		if c.sys.job != 0 {
			err = windows.TerminateJobObject(c.sys.job, 1)
		}
		if kerr := c.cmd.Process.Kill(); kerr != nil && err == nil && c.sys.job == 0 {
			err = kerr
		}
		return err
	}
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(c.Pid()))
}
