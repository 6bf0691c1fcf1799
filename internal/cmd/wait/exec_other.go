//go:build !unix

package waitcmd

import "errors"

// canReplace: without exec (Windows) CMD stays a supervised child.
const canReplace = false

func replaceProcess([]string) error { return errors.New("exec is not supported here") }
