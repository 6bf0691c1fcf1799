package inputfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := Kind{"test file", 10}
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, []byte("0123456789"), 0o644)
	if b, err := Read(ok, small); err != nil || string(b) != "0123456789" {
		t.Fatalf("Read(ok) = %q, %v", b, err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte("0123456789x"), 0o644)
	if _, err := Read(big, small); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "10 bytes cap of a test file") {
		t.Errorf("Read(big) = %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), small); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing) = %v", err)
	}
	if _, err := Read(dir, small); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("Read(dir) = %v", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{32 << 20: "32 MiB", 512 << 10: "512 KiB", 100: "100 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCauseDropsThePath(t *testing.T) {
	dir := t.TempDir()
	_, err := Read(filepath.Join(dir, "missing.yaml"), Targets)
	if got := Cause(err); !errors.Is(got, fs.ErrNotExist) || strings.Contains(got.Error(), "missing.yaml") {
		t.Errorf("Cause(%v) = %v", err, got)
	}
	_, err = Read(dir, Targets)
	if got := Cause(err); !errors.Is(got, ErrNotRegular) || strings.Contains(got.Error(), dir) {
		t.Errorf("Cause(%v) = %v", err, got)
	}
}
