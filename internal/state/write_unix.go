//go:build unix

package state

import (
	"bufio"
	"io"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// writeAtomic is WriteFileFunc on Unix: renameio's pending file, then an
// fsync of the directory.
func writeAtomic(name string, perm os.FileMode, write func(io.Writer) error) error {
	// The temporary file goes next to name, never to $TMPDIR: a kill leaves
	// it where it is seen (".NAME123…", not matching *.prom or NAME).
	t, err := renameio.NewPendingFile(name, renameio.WithPermissions(perm), renameio.WithExistingPermissions(),
		renameio.WithTempDir(filepath.Dir(name)))
	if err != nil {
		return err
	}
	defer t.Cleanup()
	b := bufio.NewWriterSize(t, 64<<10)
	if err := write(b); err != nil {
		return err
	}
	if err := b.Flush(); err != nil {
		return err
	}
	if err := t.CloseAtomicallyReplace(); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
