package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
)

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, f, err := Open(context.Background(), path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Targets) != 0 {
		t.Fatalf("a missing file should be an empty state, got %v", f.Targets)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Targets["a \"b\"\n"] = Entry{History: policy.History{StartedAt: start, Streak: 2, RecoveryPending: true},
		LastOutcome: classify.Refused, LastAction: policy.IgnoreBlip, Redeploys: 3}
	if err := s.Save(f); err != nil {
		t.Fatal(err)
	}
	s.Close()
	g, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	got := g.Targets["a \"b\"\n"]
	if got.Streak != 2 || !got.StartedAt.Equal(start) || !got.RecoveryPending || got.Redeploys != 3 || got.LastAction != policy.IgnoreBlip {
		t.Fatalf("round trip lost data: %+v", got)
	}
	if g.SchemaVersion != SchemaVersion {
		t.Fatalf("schema_version %d", g.SchemaVersion)
	}
}

func TestCorruptIsAnErrorAndUntouched(t *testing.T) {
	for name, content := range map[string]string{
		"garbage":   "not json",
		"torn":      `{"schema_version":1,"targets":{"a":`,
		"schema":    `{"schema_version":99,"targets":{}}`,
		"negative":  `{"schema_version":1,"targets":{"a":{"streak":-4}}}`,
		"two":       `{"schema_version":1,"targets":{}} {}`,
		"wrongtype": `{"schema_version":1,"targets":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := Open(context.Background(), path, time.Second)
			var se *Error
			if !errors.As(err, &se) || se.Locked {
				t.Fatalf("want a state error, got %v", err)
			}
			b, _ := os.ReadFile(path)
			if string(b) != content {
				t.Fatalf("file changed: %q", b)
			}
			// The lock was released: the next open does not wait.
			if _, _, err := Open(context.Background(), path, 50*time.Millisecond); errors.As(err, &se) && se.Locked {
				t.Fatal("the lock was kept after a read error")
			}
		})
	}
}

func TestLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, _, err := Open(context.Background(), path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = Open(context.Background(), path, 100*time.Millisecond)
	var se *Error
	if !errors.As(err, &se) || !se.Locked {
		t.Fatalf("want a lock timeout, got %v", err)
	}
	s.Close()
	s2, _, err := Open(context.Background(), path, time.Second)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	s2.Close()
}

// WriteFileFunc streams the content; a writer that fails leaves the old file
// as it was and no temporary file behind. Save writes what MarshalIndent
// wrote before it streamed.
func TestWriteFileFuncAndSaveFormat(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "m.prom")
	if err := WriteFile(name, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFileFunc(name, 0o644, func(w io.Writer) error {
		w.Write(bytes.Repeat([]byte("x"), 200<<10)) // past the buffer: some reached the temporary file
		return errors.New("render failed")
	})
	if err == nil {
		t.Fatal("a failing writer should fail the write")
	}
	if b, _ := os.ReadFile(name); string(b) != "old\n" {
		t.Fatalf("file changed by a failed write: %.20q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}

	path := filepath.Join(dir, "state.json")
	s, f, err := Open(context.Background(), path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f.Targets["<a&b>"] = Entry{LastOutcome: classify.Pass, Redeploys: 1}
	if err := s.Save(f); err != nil {
		t.Fatal(err)
	}
	// As json.MarshalIndent, without HTML escaping ("<a&b>" stays so).
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	_ = enc.Encode(f)
	if got, _ := os.ReadFile(path); string(got) != want.String() {
		t.Fatalf("saved\n%s\nwant\n%s", got, want.String())
	}
}

// TestSaveOutOfRangeTime: one target's time that JSON cannot hold (a
// started_at in milliseconds read as seconds) never stops the save.
func TestSaveOutOfRangeTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s, f, err := Open(context.Background(), path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f.Targets["bad"] = Entry{History: policy.History{StartedAt: time.Unix(1764500000000, 0), Streak: 1}}
	f.Targets["good"] = Entry{History: policy.History{Streak: 2}}
	if err := s.Save(f); err != nil {
		t.Fatalf("save failed for one target's time: %v", err)
	}
	g, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Targets["good"].Streak != 2 || g.Targets["bad"].Streak != 1 || !g.Targets["bad"].StartedAt.IsZero() {
		t.Fatalf("%+v", g.Targets)
	}
}

func TestParseChecks(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"", ""},
		{" \n", ""},
		{`{"schema_version":1,"sweeps":-1,"targets":{}}`, "sweeps -1 is negative"},
		{`{"schema_version":1,"targets":{"a":{"redeploys":-2}}}`, `target "a": redeploys -2 is negative`},
		{`{"schema_version":1,"targets":{"a":{"timeout_streak":-1}}}`, `target "a": timeout_streak -1 is negative`},
	} {
		f, err := Parse("s.json", []byte(tc.data))
		if tc.want == "" {
			if err != nil || f == nil || f.Targets == nil {
				t.Errorf("%q: %v", tc.data, err)
			}
			continue
		}
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%q: %v, want %q", tc.data, err, tc.want)
		}
	}
}

func TestWriteFileThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "vol", "real")
	if err := os.Mkdir(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("vol/real", link); err != nil {
		t.Skip(err)
	}
	for _, content := range []string{"one", "two"} {
		if err := WriteFile(link, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link was replaced: %v %v", fi, err)
		}
		if b, _ := os.ReadFile(real); string(b) != content {
			t.Fatalf("target holds %q, want %q", b, content)
		}
	}
	if err := CheckWritable(link); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(dir); err == nil {
		t.Fatal("a directory is writable?")
	}
}

// TestStaleTempsRemoved: the temporary files a killed run left beside the
// file (".m.prom123…") go on the next write — an old one only, a fresh one
// may be another run's — and the state's under its lock at once.
func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	prom := filepath.Join(dir, "m.prom")
	oldTemp, freshTemp, other := filepath.Join(dir, ".m.prom8841"), filepath.Join(dir, ".m.prom9912"), filepath.Join(dir, ".m.prom.keep")
	for _, f := range []string{oldTemp, freshTemp, other} {
		if err := os.WriteFile(f, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleAge)
	os.Chtimes(oldTemp, old, old)
	os.Chtimes(other, old, old)
	if err := WriteFile(prom, []byte("x 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(oldTemp); err == nil {
		t.Error("the old temporary file is still there")
	}
	for _, f := range []string{freshTemp, other} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s removed: %v", f, err)
		}
	}
	statePath := filepath.Join(dir, "state.json")
	st := filepath.Join(dir, ".state.json123")
	os.WriteFile(st, []byte("{"), 0o600)
	s, _, err := Open(context.Background(), statePath, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(st); err == nil {
		t.Error("the state's temporary file is still there after Open")
	}
}

// TestReadBounded: a state file too large for the run is refused before it
// is read (a sparse 1 GiB file: no memory grows), and a key this
// healthctl does not know is refused rather than dropped by the next save.
func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(1 << 30)
	f.Close()
	if _, err := Read(big); err == nil || !strings.Contains(err.Error(), "larger than the 256 MiB cap of a state file") {
		t.Errorf("Read(1 GiB) = %v", err)
	}
	if _, err := Parse("s.json", []byte(`{"schema_version":1,"targets":{"a":{"streak":1,"owner":"team-x"}}}`)); err == nil || !strings.Contains(err.Error(), `unknown field "owner"`) {
		t.Errorf("Parse(unknown key) = %v", err)
	}
}
