package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Resolve returns the file a path names after following symlinks, so an
// atomic replace (a rename) lands on the link's target instead of turning
// the link into a regular file: a --state or --prom-file that links into a
// mounted volume keeps being written there. A path that is no link, or does
// not exist yet, is returned as it is; a dangling link resolves to the file
// it would create.
func Resolve(name string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			return name, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return name, nil
		}
		to, err := os.Readlink(name)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(name), to)
		}
		name = to
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", name)
}

// CheckWritable reports, before anything is probed, whether name can be
// written the way WriteFile writes it: it (or the file its symlink names)
// is not a directory, and its directory takes a new file (created and
// removed again). So exit 2 can still mean "nothing probed, nothing run".
func CheckWritable(name string) error {
	real, err := Resolve(name)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(real); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", real)
	}
	dir := filepath.Dir(real)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("its directory: %v", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(real)+".check-")
	if err != nil {
		return fmt.Errorf("cannot create files in %s: %v", dir, unwrapPath(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// unwrapPath drops the temporary name from a *PathError: the user never
// named that file.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// removeStale removes the temporary files a killed run left next to the
// state file (".NAME" and digits, as WriteFile names them): up to the
// state's size each. Called under the lock, so no other run is writing one.
func removeStale(real string) {
	dir, base := filepath.Dir(real), "."+filepath.Base(real)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), base)
		if !ok || e.IsDir() {
			continue
		}
		rest = strings.TrimPrefix(rest, "-")
		if rest == "" || strings.Trim(rest, "0123456789") != "" {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}
