//go:build unix

package state

import (
	"bufio"
	"io"
	"os"
)

// writeAtomic is WriteFileFunc on Unix, in the file's place (its trusted
// directory, open): a new temporary file there (O_EXCL, O_NOFOLLOW),
// written and fsynced, renamed over the name (renameat in the same
// directory), then an fsync of the directory. The temporary file goes next
// to name, never to $TMPDIR: a kill leaves it where it is seen
// (".NAME123…", not matching *.prom or NAME).
func writeAtomic(p *place, perm os.FileMode, write func(io.Writer) error) error {
	t, tmp, err := p.createTemp(perm)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			t.Close()
			p.remove(tmp)
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
	if err := p.rename(tmp); err != nil {
		return err
	}
	done = true
	return p.sync()
}
