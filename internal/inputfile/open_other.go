//go:build !unix

package inputfile

import "os"

// openNonBlocking: Windows has no FIFOs in the file system (its named
// pipes live under \\.\pipe\, which Stat does not call regular files).
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
