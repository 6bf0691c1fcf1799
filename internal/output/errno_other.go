//go:build !unix

package output

import "syscall"

// errDQUOT: no quota errno here; ENOSPC stands in (already listed).
const errDQUOT = syscall.ENOSPC
