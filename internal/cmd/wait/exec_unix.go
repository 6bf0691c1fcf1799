//go:build unix

package waitcmd

import (
	"os"
	"os/exec"
	"syscall"
)

// canReplace: Unix can exec CMD in healthctl's place.
const canReplace = true

// replaceProcess execs argv in place of this process, with its environment
// and open standard streams. It returns only on failure.
func replaceProcess(argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
}
