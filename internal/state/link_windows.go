//go:build windows

package state

import (
	"io/fs"
	"os"
)

// lockFlags: Windows has no O_NOFOLLOW; its symlinks need a privilege to
// create.
const lockFlags = os.O_CREATE | os.O_RDONLY

// trustLink: a Windows symlink needs SeCreateSymbolicLinkPrivilege
// (administrators, or developer mode) and has no Unix owner to compare:
// links are followed as they are.
func trustLink(string, fs.FileInfo) error { return nil }
