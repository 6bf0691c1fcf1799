//go:build unix

package state

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// lockFlags open a lock file without following a symlink: the lock's path
// is resolved (and its links judged) first, so a link planted between the
// two is refused by the kernel (ELOOP) rather than followed.
const lockFlags = os.O_CREATE | os.O_RDONLY | syscall.O_NOFOLLOW

// trustLink judges a symlink found at link (fi is its Lstat): followed only
// when it is owned by the user running healthctl or by root, and sits in a
// directory others cannot write, unless that directory is sticky (/tmp:
// others cannot rename or remove a link they do not own).
func trustLink(link string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	me := os.Geteuid()
	if int(st.Uid) != me && st.Uid != 0 {
		return &LinkError{Link: link, Why: fmt.Sprintf("owned by uid %d (neither you, uid %d, nor root)", st.Uid, me)}
	}
	dir := filepath.Dir(link)
	di, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if di.Mode().Perm()&0o002 != 0 && di.Mode()&fs.ModeSticky == 0 {
		return &LinkError{Link: link, Why: fmt.Sprintf("in %s, a directory anyone can write (mode %v, not sticky)", dir, di.Mode().Perm())}
	}
	return nil
}
