//go:build windows

package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// place is where a file healthctl writes lives. On Windows it is the
// resolved path only: a symlink needs SeCreateSymbolicLinkPrivilege
// (administrators, or developer mode) and files carry ACLs, not a Unix
// owner and mode, so links are followed as they are and directories are
// not judged.
type place struct {
	path string
}

func (p *place) Close() error { return nil }

// locateOutput is locate: Windows has no owner rule here.
func locateOutput(name string) (*place, error) { return locate(name) }

// locate follows the links of name's final component.
func locate(name string) (*place, error) {
	for range 40 {
		fi, err := os.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			return &place{path: name}, nil
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if fi.IsDir() {
				return nil, fmt.Errorf("%s is a directory", name)
			}
			return &place{path: name}, nil
		}
		to, err := os.Readlink(name)
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(name), to)
		}
		name = to
	}
	return nil, fmt.Errorf("%s: too many levels of symbolic links", name)
}

func (p *place) createTemp(perm os.FileMode) (*os.File, string, error) {
	f, err := os.CreateTemp(filepath.Dir(p.path), "."+filepath.Base(p.path))
	if err != nil {
		return nil, "", err
	}
	return f, filepath.Base(f.Name()), nil
}

func (p *place) remove(name string) { os.Remove(filepath.Join(filepath.Dir(p.path), name)) }

// lockFile locks the file at p with LockFileEx (gofrs/flock), polling
// every 20 ms until ctx ends.
func lockFile(ctx context.Context, p *place) (io.Closer, error) {
	lk := flock.New(p.path, flock.SetFlag(os.O_CREATE|os.O_RDONLY))
	ok, err := lk.TryLockContext(ctx, 20*time.Millisecond)
	if ok {
		return lk, nil
	}
	if err == nil {
		err = ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		lk.Close()
		return nil, err
	}
	lk.Close()
	return nil, err
}
