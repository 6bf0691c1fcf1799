//go:build unix

package limits

import "syscall"

// softNOFILE is the soft limit on open files (1024 when unknown).
func softNOFILE() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 1024
	}
	return uint64(r.Cur)
}
