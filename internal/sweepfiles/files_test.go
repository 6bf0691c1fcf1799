package sweepfiles

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/metrics"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
)

// TestWrite: a sweep's state and metrics are written and timed; --listen's
// publish goes before --prom-file, and a failed one skips the file; a
// --prom-file that cannot be written is named by its setting; every error
// is a *output.WriteError (exit 74). Nothing set: nothing written.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	store, st, err := state.Open(context.Background(), filepath.Join(dir, "state.json"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s := &watch.Sweep{N: 1}
	in := metrics.Input{State: st, Sweep: s}

	if took, errs := (&Files{}).Write(st, in); took != (Written{}) || errs != nil {
		t.Fatalf("nothing to write: %+v, %v", took, errs)
	}

	var published int
	f := &Files{Store: store, PromFile: filepath.Join(dir, "m.prom"), PromSource: "--prom-file",
		Publish: func(metrics.Input) error { published++; return nil }}
	took, errs := f.Write(st, in)
	if errs != nil || took.State <= 0 || took.Metrics <= 0 || published != 1 {
		t.Fatalf("took %+v, errors %v, published %d", took, errs, published)
	}
	for _, name := range []string{"state.json", "m.prom"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || len(b) == 0 {
			t.Errorf("%s: %d bytes, %v", name, len(b), err)
		}
	}
	if err := f.Save(st); err != nil {
		t.Errorf("Save: %v", err)
	}

	f.Publish = func(metrics.Input) error { return errors.New("no space") }
	f.PromFile = filepath.Join(dir, "missing", "m.prom")
	_, errs = f.Write(st, in)
	var we *output.WriteError
	if len(errs) != 1 || !errors.As(errs[0], &we) || we.What != "metrics" {
		t.Errorf("a failed publish: %v", errs)
	}
	f.Publish = nil
	took, errs = f.Write(st, in)
	if len(errs) != 1 || !errors.As(errs[0], &we) || !strings.HasPrefix(we.What, "--prom-file "+f.PromFile) || took.Metrics <= 0 {
		t.Errorf("an unwritable --prom-file: %v (took %+v)", errs, took)
	}
}
