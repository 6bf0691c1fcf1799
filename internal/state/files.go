package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/inputfile"
)

// Resolve returns the file a path names after following symlinks, so an
// atomic replace (a rename) lands on the link's target instead of turning
// the link into a regular file: a --state or --prom-file that links into a
// mounted volume keeps being written there. A path that is no link, or does
// not exist yet, is returned as it is; a dangling link resolves to the file
// it would create.
//
// A link is followed only when it is trusted (trustLink): owned by the user
// running healthctl or by root, in a directory that others cannot write
// (or that is sticky, so others cannot swap the link). Otherwise someone
// else planted it — `nobody` linking a shared directory's healthctl.prom to
// /etc/passwd — and following it would make healthctl (often root) replace
// or create a file of their choosing: that is a *LinkError, and nothing is
// written. This is the kernel's fs.protected_symlinks rule, made stricter
// and applied where healthctl resolves links itself.
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
		if err := trustLink(name, fi); err != nil {
			return "", err
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

// LinkError is a symlink healthctl will not follow (see Resolve).
type LinkError struct {
	Link string
	Why  string
}

func (e *LinkError) Error() string {
	return e.Link + " is a symlink " + e.Why + ": not followed (a link someone else can plant or swap would make healthctl write where they choose); replace it with a file or a link of your own in a directory only you can write"
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
	if err := checkRegular(real); err != nil {
		return err
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

// checkRegular refuses a file that exists and is not a regular file: the
// atomic replace (a rename over it) would put a regular file where a
// device, a FIFO or a socket was — run as root, --prom-file /dev/null would
// replace /dev/null for the whole machine.
func checkRegular(real string) error {
	fi, err := os.Stat(real)
	switch {
	case err != nil || fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return fmt.Errorf("%s is a directory", real)
	}
	return fmt.Errorf("%s is %s, not a regular file (it would be replaced by one)", real, inputfile.What(fi.Mode()))
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
// state file (".NAME" and digits, as WriteFile names them), in the
// directory of the resolved file only. Called under the lock, so no other
// run is writing one.
func removeStale(real string) { removeStaleOlder(real, 0) }

// removeStaleOlder is removeStale for a file written without a lock (the
// Prometheus textfile): only temporary files older than age, so a run
// writing the same file at this moment keeps its own.
func removeStaleOlder(real string, age time.Duration) {
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
		if age > 0 {
			fi, err := e.Info()
			if err != nil || time.Since(fi.ModTime()) < age {
				continue
			}
		}
		if e.Type()&fs.ModeSymlink != 0 || !e.Type().IsRegular() {
			continue // healthctl's temporary files are regular files
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}
