package state

import "golang.org/x/sys/unix"

// dirFlags open a directory on the way to a file: O_PATH needs no read
// permission (a 0711 home is walked through as the kernel would).
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC
