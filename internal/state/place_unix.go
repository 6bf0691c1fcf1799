//go:build unix

package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/healthctl/healthctl/internal/inputfile"
)

// place is where a file healthctl writes lives: its directory, opened by a
// walk from / that follows no link it has not judged (O_NOFOLLOW, openat
// from the directory before), and the file's name in it. Every directory
// on the way was trusted when it was opened (trustDir) and every link
// followed was trusted (trustLink), so nobody but root and the user can
// change what the path means afterwards; and the writes (the temporary
// file, the rename, the lock) are made relative to the open directory, so
// a link swapped in anyway is never followed.
type place struct {
	dir  int    // the directory, opened O_PATH (Linux) or O_RDONLY
	path string // the resolved file: dir's path and base
	base string
}

func (p *place) Close() error { return unix.Close(p.dir) }

// locate walks name (made absolute) from / and returns its place. A link
// in the path, the file's own name included, is followed only when it is
// trusted and then walked again from /; a directory must be trusted; an
// existing file must be a regular file owned by root or the user. A
// missing file is fine (it will be created), a missing directory is not.
func locate(name string) (*place, error) { return locateFor(name, false) }

// locateOutput is locate for a file healthctl only writes and never reads
// back (the metrics textfile): a directory on the way may belong to
// another user when nobody else can write it — Debian's node exporter
// reads /var/lib/prometheus/node-exporter, under the prometheus user's
// /var/lib/prometheus. Its owner can at most choose where in its own tree
// the file lands: each directory is held open as it is walked, links are
// judged as locate judges them, and the file is created new (O_EXCL,
// O_NOFOLLOW) and renamed into place, never written through a name.
func locateOutput(name string) (*place, error) { return locateFor(name, true) }

func locateFor(name string, output bool) (*place, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	// Errors and the resolved path name a file as the user did: relative
	// to the working directory when they gave a relative path.
	shown := inputfile.Shown(name)
	links := 0
restart:
	fd, err := unix.Open("/", dirFlags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	cur := "/"
	if err := trustDir(fd, cur, output); err != nil {
		unix.Close(fd)
		return nil, err
	}
	parts := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	for i, c := range parts {
		last := i == len(parts)-1
		if c == "" || c == "." {
			if last {
				unix.Close(fd)
				return nil, fmt.Errorf("%s is a directory", shown(cur))
			}
			continue
		}
		at := filepath.Join(cur, c)
		var st unix.Stat_t
		err := unix.Fstatat(fd, c, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case errors.Is(err, unix.ENOENT) && last:
			return &place{dir: fd, path: shown(at), base: c}, nil
		case err != nil:
			unix.Close(fd)
			if errors.Is(err, unix.ENOENT) {
				// A missing directory: the file cannot be created (the
				// caller names the file it was creating).
				return nil, &fs.PathError{Op: "stat", Path: shown(at), Err: unix.ENOENT}
			}
			return nil, &fs.PathError{Op: "stat", Path: shown(at), Err: err}
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			if err := trustLink(shown(at), st.Uid); err != nil {
				unix.Close(fd)
				return nil, err
			}
			to, err := readlinkat(fd, c)
			unix.Close(fd)
			if err != nil {
				return nil, &fs.PathError{Op: "readlink", Path: shown(at), Err: err}
			}
			if links++; links > 40 {
				return nil, fmt.Errorf("%s: too many levels of symbolic links", name)
			}
			if !filepath.IsAbs(to) {
				to = filepath.Join(cur, to)
			}
			abs = filepath.Join(append([]string{to}, parts[i+1:]...)...)
			goto restart
		case last:
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				unix.Close(fd)
				return nil, fmt.Errorf("%s is a directory", shown(at))
			}
			if err := trustFile(shown(at), st); err != nil {
				unix.Close(fd)
				return nil, err
			}
			return &place{dir: fd, path: shown(at), base: c}, nil
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			unix.Close(fd)
			return nil, fmt.Errorf("%s is not a directory", shown(at))
		}
		next, err := unix.Openat(fd, c, dirFlags|unix.O_NOFOLLOW, 0)
		unix.Close(fd)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: shown(at), Err: err}
		}
		fd, cur = next, at
		if err := trustDir(fd, shown(cur), output); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	unix.Close(fd)
	return nil, fmt.Errorf("%s is a directory", shown(cur))
}

func readlinkat(fd int, name string) (string, error) {
	for n := 256; n <= 1<<16; n *= 2 {
		buf := make([]byte, n)
		k, err := unix.Readlinkat(fd, name, buf)
		if err != nil {
			return "", err
		}
		if k < n {
			return string(buf[:k]), nil
		}
	}
	return "", unix.ENAMETOOLONG
}

// trustDir judges a directory on the way to a file healthctl writes (fd,
// open on it): it must belong to root or the user — another owner can
// replace anything in it, a directory of its own or a link included — and
// others must not be able to write it, unless it is sticky (/tmp: others
// cannot rename or remove a name they do not own; the names in it are
// judged one by one on the way). With output (locateOutput) another
// owner is accepted when nobody else can write the directory.
func trustDir(fd int, dir string, output bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	if !inputfile.TrustedOwner(st.Uid) && !output {
		return &DirError{Dir: dir, Why: "owned by " + inputfile.Owner(st.Uid) + ", neither you nor root"}
	}
	if inputfile.OthersCanWrite(uint32(st.Mode), st.Gid) && st.Mode&unix.S_ISVTX == 0 {
		who := "anyone"
		if st.Mode&0o002 == 0 {
			who = "group " + inputfile.Group(st.Gid)
		}
		return &DirError{Dir: dir, Why: fmt.Sprintf("writable by %s (mode %04o, not sticky; owner %s)", who, st.Mode&0o7777, inputfile.Owner(st.Uid))}
	}
	return nil
}

// trustLink judges a symlink on the way (the directory holding it is
// trusted already): followed only when it is owned by the user running
// healthctl or by root — the kernel's fs.protected_symlinks rule, made
// stricter and applied to every link of the path, directories' included.
func trustLink(link string, uid uint32) error {
	if !inputfile.TrustedOwner(uid) {
		return &LinkError{Link: link, Why: "owned by " + inputfile.Owner(uid) + ", neither you nor root"}
	}
	return nil
}

// trustFile judges the file itself when it exists: owned by root or the
// user — one of another user's, in a sticky directory, is theirs to swap
// for a FIFO or keep locked. (Its type is checkRegular's and Read's.)
func trustFile(name string, st unix.Stat_t) error {
	if !inputfile.TrustedOwner(st.Uid) {
		return &DirError{Dir: name, Why: "owned by " + inputfile.Owner(st.Uid) + ", neither you nor root", File: true}
	}
	return nil
}

// createTemp creates a new temporary file ".BASE<digits>" in the place's
// directory (O_EXCL, O_NOFOLLOW: never an existing file or a link) with
// perm, or the existing file's permissions when it exists.
func (p *place) createTemp(perm os.FileMode) (*os.File, string, error) {
	var st unix.Stat_t
	existing := unix.Fstatat(p.dir, p.base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
	if existing {
		perm = fs.FileMode(st.Mode) & 0o777
	}
	for range 10000 {
		name := "." + p.base + tempSuffix()
		fd, err := unix.Openat(p.dir, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm))
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(filepath.Dir(p.path), name), Err: err}
		}
		f := os.NewFile(uintptr(fd), filepath.Join(filepath.Dir(p.path), name))
		// An existing file's permissions are kept exactly (the umask
		// narrowed them at the open), as renameio's
		// WithExistingPermissions did; a new file's are perm less the umask.
		if existing {
			if err := f.Chmod(perm); err != nil {
				f.Close()
				unix.Unlinkat(p.dir, name, 0)
				return nil, "", err
			}
		}
		return f, name, nil
	}
	return nil, "", &fs.PathError{Op: "create", Path: p.path, Err: fs.ErrExist}
}

// rename moves the temporary file tmp over the file, in the directory.
func (p *place) rename(tmp string) error {
	if err := unix.Renameat(p.dir, tmp, p.dir, p.base); err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: p.path, Err: err}
	}
	return nil
}

func (p *place) remove(name string) { unix.Unlinkat(p.dir, name, 0) }

// sync fsyncs the directory, so a rename in it survives a power loss.
func (p *place) sync() error {
	fd, err := unix.Openat(p.dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: filepath.Dir(p.path), Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return &fs.PathError{Op: "sync", Path: filepath.Dir(p.path), Err: err}
	}
	return nil
}

// openLock opens (creating) the file as a lock: no link followed, no FIFO
// waited on (O_NONBLOCK), and a regular file only.
func (p *place) openLock() (*os.File, error) {
	fd, err := unix.Openat(p.dir, p.base, unix.O_RDONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p.path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("%s is not a regular file", p.path)
	}
	return os.NewFile(uintptr(fd), p.path), nil
}
