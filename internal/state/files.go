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

// LinkError is a symlink healthctl will not follow (see locate).
type LinkError struct {
	Link string
	Why  string
}

func (e *LinkError) Error() string {
	return e.Link + " is a symlink " + e.Why + ": not followed (a link someone else can plant or swap would make healthctl write where they choose); replace it with a file or a link of your own in a directory only you can write"
}

// DirError is a directory on the way to a file healthctl writes that
// someone other than root and the user controls, or (File) an existing
// file of another user's where healthctl would write (see locate).
type DirError struct {
	Dir  string
	Why  string
	File bool
}

func (e *DirError) Error() string {
	if e.File {
		return e.Dir + " is " + e.Why + ": not written (another user's file where healthctl writes is theirs to swap); remove it, or chown it to yourself"
	}
	return "directory " + e.Dir + " is " + e.Why + ": nothing is written under it (whoever can write it can swap what the path names); use a directory only you (or root) can write, or chown/chmod go-w it (or chmod +t it: sticky, as /tmp is)"
}

// CheckWritable reports, before anything is probed, whether name can be
// written the way WriteFile writes it: its path is trusted (locate), it
// (or the file its symlink names) is not a directory, and its directory
// takes a new file (created and removed again). So exit 2 can still mean
// "nothing probed, nothing run".
func CheckWritable(name string) error { return checkWritable(locate, name) }

// CheckOutputWritable is CheckWritable for a file written by
// WriteOutputFunc.
func CheckOutputWritable(name string) error { return checkWritable(locateOutput, name) }

func checkWritable(locate func(string) (*place, error), name string) error {
	p, err := locate(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("its directory: %v", err)
	}
	if err != nil {
		return err
	}
	defer p.Close()
	if err := checkRegular(p.path); err != nil {
		return err
	}
	f, tmp, err := p.createTemp(0o600)
	if err != nil {
		return fmt.Errorf("cannot create files in %s: %v", filepath.Dir(p.path), unwrapPath(err))
	}
	f.Close()
	p.remove(tmp)
	return nil
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
