package output

import (
	"bytes"
	"errors"
	"fmt"
	"syscall"
	"testing"
)

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

func TestWriteFailures(t *testing.T) {
	if err := JSONLine(failing{}, map[string]int{"a": 1}); !IsWriteFailure(err) {
		t.Errorf("JSONLine to a full disk: %v, want a write failure", err)
	}
	if err := JSONLine(&bytes.Buffer{}, func() {}); err == nil || IsWriteFailure(err) {
		t.Errorf("a value JSON cannot encode: %v, want an encoding error (a bug), not a write failure", err)
	}
	cw := &CheckedWriter{W: failing{}, What: "stdout"}
	fmt.Fprintln(cw, "x")
	fmt.Fprintln(cw, "y")
	var we *WriteError
	if err := cw.Err(); !errors.As(err, &we) || we.What != "stdout" || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("CheckedWriter kept %v", err)
	}
	if IsWriteFailure(errors.New("bad flag")) || !IsWriteFailure(fmt.Errorf("x: %w", syscall.EROFS)) {
		t.Error("IsWriteFailure misjudges")
	}
}
