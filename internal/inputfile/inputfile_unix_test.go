//go:build unix

package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadRefusesFIFOAndDevices: a FIFO with no writer is refused at once
// (os.ReadFile blocks in open() for ever), /dev/zero (a file that never
// ends) is refused naming the cap, without reading it.
func TestReadRefusesFIFOAndDevices(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	start := time.Now()
	_, err := Read(fifo, Targets)
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a FIFO") || !strings.Contains(err.Error(), fifo) {
		t.Errorf("Read(fifo) = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Read(fifo) took %v", d)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip(err)
	}
	_, err = Read("/dev/zero", Config)
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a character device") || !strings.Contains(err.Error(), "1 MiB") {
		t.Errorf("Read(/dev/zero) = %v", err)
	}
}

// TestReadDevNull: /dev/null, the usual way to say "none", reads as empty.
func TestReadDevNull(t *testing.T) {
	if b, err := Read(os.DevNull, Config); err != nil || len(b) != 0 {
		t.Fatalf("Read(%s) = %q, %v", os.DevNull, b, err)
	}
}
