//go:build windows

package state

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/windows"
)

// writeAtomic is WriteFileFunc on Windows, where renameio's pending file
// does not exist: a temporary file in the same directory (".NAME123…", as
// on Unix), written, fsynced (FlushFileBuffers) and closed, then moved over
// name with MoveFileEx(MOVEFILE_REPLACE_EXISTING|MOVEFILE_WRITE_THROUGH) —
// what os.Rename calls, plus WRITE_THROUGH, which returns only once the
// move is on disk and stands in for the directory fsync Windows cannot do.
// perm is not applied (Windows files carry ACLs, inherited from the
// directory); an existing file's ACL is replaced by the directory's.
func writeAtomic(p *place, perm os.FileMode, write func(io.Writer) error) error {
	name := p.path
	t, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name))
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok { // a failed write leaves the old file and no temporary file
			t.Close() // (a second Close only returns an error)
			os.Remove(t.Name())
		}
	}()
	b := bufio.NewWriterSize(t, 64<<10)
	if err := write(b); err != nil {
		return err
	}
	if err := b.Flush(); err != nil {
		return err
	}
	if err := t.Sync(); err != nil {
		return err
	}
	if err := t.Close(); err != nil {
		return err
	}
	if err := replace(t.Name(), name); err != nil {
		return err
	}
	ok = true
	return nil
}

// replace moves from over to. A reader that has the destination open
// without FILE_SHARE_DELETE (an antivirus scan, a collector reading the
// textfile) makes the move fail with a sharing or access error for a
// moment: it is retried for up to a second.
func replace(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	t, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	deadline := time.Now().Add(time.Second)
	for {
		err = windows.MoveFileEx(f, t, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
		if err == nil {
			return nil
		}
		if !errors.Is(err, windows.ERROR_ACCESS_DENIED) && !errors.Is(err, windows.ERROR_SHARING_VIOLATION) || time.Now().After(deadline) {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
