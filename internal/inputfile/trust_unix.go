//go:build unix

package inputfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// TrustInput judges a file a command can come from — the config file
// (on-redeploy), the targets file of a watch with a hook, the state file
// (whether a hook already ran) — as sshd's StrictModes judges
// authorized_keys: the file must belong to root or the user running
// healthctl and be writable by nobody else, and every directory from / to
// it (and every link followed on the way) must belong to root or the user
// and be writable by nobody else unless sticky (/tmp). Otherwise another
// user could make healthctl — often root — run a command of theirs. A
// missing file is no error here (reading it says so); os.DevNull is none.
// The error is a *TrustError naming the file or directory, its owner and
// mode, and the fix.
func TrustInput(path string, k Kind) error {
	if path == os.DevNull {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	shown := Shown(path)
	links := 0
restart:
	if err := trustDir("/", "/", k); err != nil {
		return err
	}
	cur := "/"
	parts := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	for i, c := range parts {
		if c == "" || c == "." {
			continue
		}
		at := filepath.Join(cur, c)
		fi, err := os.Lstat(at)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		last := i == len(parts)-1
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if !TrustedOwner(st.Uid) {
				return &TrustError{Path: shown(at), Kind: k, Link: true, Uid: st.Uid, Mode: fi.Mode()}
			}
			to, err := os.Readlink(at)
			if err != nil {
				return err
			}
			if links++; links > 40 {
				return fmt.Errorf("%s: too many levels of symbolic links", path)
			}
			if !filepath.IsAbs(to) {
				to = filepath.Join(cur, to)
			}
			abs = filepath.Join(append([]string{to}, parts[i+1:]...)...)
			goto restart
		case last && !fi.Mode().IsRegular():
			return nil // not a file to read: Read says so
		case last:
			if !TrustedOwner(st.Uid) || OthersCanWrite(uint32(st.Mode), st.Gid) {
				return &TrustError{Path: shown(at), Kind: k, Uid: st.Uid, Gid: st.Gid, Mode: fi.Mode()}
			}
			return nil
		case fi.IsDir():
			if err := trustDir(at, shown(at), k); err != nil {
				return err
			}
		}
		cur = at
	}
	return nil
}

func trustDir(dir, name string, k Kind) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st := fi.Sys().(*syscall.Stat_t)
	if !TrustedOwner(st.Uid) || OthersCanWrite(uint32(st.Mode), st.Gid) && st.Mode&syscall.S_ISVTX == 0 {
		return &TrustError{Path: name, Kind: k, Dir: true, Uid: st.Uid, Gid: st.Gid, Mode: fi.Mode()}
	}
	return nil
}

// Shown returns how to name a path found on the way to the file the user
// named as path: relative to the working directory when path was relative
// and the found one is below it, else absolute.
func Shown(path string) func(at string) string {
	if !filepath.IsAbs(path) {
		if wd, err := os.Getwd(); err == nil && wd != "/" {
			return func(at string) string {
				if r, ok := strings.CutPrefix(at, wd+"/"); ok {
					return r
				}
				return at
			}
		}
	}
	return func(at string) string { return at }
}

// TrustError is a file a command can come from that someone other than
// root and the user controls (see TrustInput).
type TrustError struct {
	Path string
	Kind Kind
	// Dir: a directory above the file; Link: a link on the way.
	Dir, Link bool
	Uid, Gid  uint32
	Mode      fs.FileMode
}

func (e *TrustError) Error() string {
	what := "the " + e.Kind.Name + " " + e.Path
	fix := ""
	switch {
	case e.Link:
		return fmt.Sprintf("%s is a symlink owned by %s (neither you nor root): not followed; a %s must be yours or root's all the way (replace the link with one of your own)",
			e.Path, Owner(e.Uid), e.Kind.Name)
	case e.Dir:
		what = "directory " + e.Path + " (above the " + e.Kind.Name + ")"
	}
	var why []string
	if !TrustedOwner(e.Uid) {
		why = append(why, "owned by "+Owner(e.Uid))
		fix = "chown root " + e.Path
	}
	perm := uint32(e.Mode.Perm())
	if e.Mode&fs.ModeSticky != 0 {
		perm |= syscall.S_ISVTX
	}
	if OthersCanWrite(perm, e.Gid) && (!e.Dir || e.Mode&fs.ModeSticky == 0) {
		who := "anyone"
		if perm&0o002 == 0 {
			who = "group " + Group(e.Gid)
		}
		why = append(why, "writable by "+who)
		if fix != "" {
			fix += " and "
		}
		fix += "chmod go-w " + e.Path
		if e.Dir {
			fix += " (or chmod +t " + e.Path + ": sticky, as /tmp is)"
		}
	}
	return fmt.Sprintf("%s is %s (mode %04o): another user could make healthctl run a command of theirs (on-redeploy); it must be yours or root's and writable by no one else (sshd's StrictModes rule): %s",
		what, strings.Join(why, ", "), perm, fix)
}

// TrustedOwner reports whether uid is root or the user running healthctl.
func TrustedOwner(uid uint32) bool { return uid == 0 || int(uid) == os.Geteuid() }

// OthersCanWrite reports whether users other than the owner (and root) can
// write a file or directory of this mode and group: anyone (o+w), or a
// group (g+w) other than root's and the user's own (a user private group,
// 0775 under umask 002, is the user's alone).
func OthersCanWrite(mode uint32, gid uint32) bool {
	return mode&0o002 != 0 || mode&0o020 != 0 && gid != 0 && int(gid) != os.Getegid()
}

// Owner names a user for an error: "uid 65534 (nobody)".
func Owner(uid uint32) string {
	s := "uid " + strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil && u.Username != "" {
		s += " (" + u.Username + ")"
	}
	return s
}

// Group names a group for an error: "gid 4 (adm)".
func Group(gid uint32) string {
	s := "gid " + strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10)); err == nil && g.Name != "" {
		s += " (" + g.Name + ")"
	}
	return s
}
