//go:build unix

package output

import "syscall"

// errDQUOT is "disk quota exceeded".
const errDQUOT = syscall.EDQUOT
