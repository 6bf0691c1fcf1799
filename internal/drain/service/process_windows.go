package service

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/healthctl/healthctl/internal/proc"
)

// Windows has no POSIX signals: Run refuses to start (proc.SignalsSupported
// is false) before any of these would be used.

func signalPid(int, syscall.Signal) error { return proc.ErrUnsupported }

func groupExists(int) bool { return false }

// stillActive is GetExitCodeProcess's STILL_ACTIVE.
const stillActive = 259

// Alive reports whether pid is a running process. A process that happens
// to exit with code 259 counts as still running (Windows' own ambiguity).
func Alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		// No such process: ERROR_INVALID_PARAMETER. Access denied means
		// it exists.
		return !errors.Is(err, windows.ERROR_INVALID_PARAMETER)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}
