//go:build !unix

package democmd

// catchSIGPIPE does nothing where there is no SIGPIPE: a write to a closed
// pipe fails with an error already.
func catchSIGPIPE() (restore func()) { return func() {} }
