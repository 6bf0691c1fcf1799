//go:build unix && !linux

package state

import "golang.org/x/sys/unix"

// dirFlags open a directory on the way to a file (no O_PATH here: a
// directory the user cannot read is an error naming it).
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
