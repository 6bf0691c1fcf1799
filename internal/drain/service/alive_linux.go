package service

import (
	"errors"
	"os"
	"syscall"

	"github.com/healthctl/healthctl/internal/proc"
)

// Alive reports whether pid is a running process (a zombie is not).
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	st, err := proc.ReadStat(pid)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	return !st.Zombie
}
