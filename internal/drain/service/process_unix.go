//go:build unix

package service

import "syscall"

// signalPid sends sig to pid (0: only checks that it exists and may be
// signalled: nil, ESRCH or EPERM).
func signalPid(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// groupExists reports whether process group pgid still has a member.
func groupExists(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
