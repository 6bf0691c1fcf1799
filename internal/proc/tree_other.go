//go:build !linux

package proc

import "syscall"

// procID: without /proc, the process group (Unix) or the job object
// (Windows) stands for the descendants.
type procID struct{}

func descendantsOf(int) []procID { return nil }

func killProcs([]procID) {}

// DieWithParent: the parent-death signal is Linux's; elsewhere the process
// group (Unix) or the job object (Windows) is what is killed on the way out.
func DieWithParent(*syscall.SysProcAttr) {}
