//go:build unix

package state

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriteInOpenedDirectory: the write is made in the directory as it
// was opened and judged (openat), not by its path again: a directory
// swapped for a link to another one after the walk is not followed — the
// file lands in the directory that was judged, the link's target stays
// untouched. Needs no root.
func TestWriteInOpenedDirectory(t *testing.T) {
	base := t.TempDir()
	dir, victim := filepath.Join(base, "d"), filepath.Join(base, "victim")
	os.Mkdir(dir, 0o755)
	os.Mkdir(victim, 0o755)
	p, err := locate(filepath.Join(dir, "m.prom"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// The swap, between the walk and the write.
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, dir); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(p, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "x 1\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir+".old", "m.prom")); err != nil || string(b) != "x 1\n" {
		t.Errorf("the judged directory holds %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 0 {
		t.Errorf("the swapped-in link's target was written: %d files", len(ents))
	}
}

// TestLockFIFORefused: a FIFO at FILE.lock is refused at once, not
// waited on (the open is O_NONBLOCK; it blocked for ever before).
func TestLockFIFORefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := syscall.Mkfifo(LockPath(path), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := Open(context.Background(), path, time.Second)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Open(FIFO lock) = %v, want a refusal", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open(FIFO lock) blocked")
	}
}
