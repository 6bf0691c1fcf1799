// Package state keeps watch's per-target history in a file between runs: cron
// and systemd runs are short-lived, so the policy's memory (streaks, grace
// start, recovery marker) lives on disk.
//
// The file is JSON with a schema_version. It is locked through a sibling
// FILE.lock (never the file that is renamed over, whose inode changes on
// every save), so overlapping runs take turns; it is written atomically
// (temporary file in the same directory, fsync, rename, directory fsync), so
// a kill at any moment leaves the old or the new file, never a torn one. A
// file that cannot be read or parsed is an error, and is never rewritten.
//
// On Windows the lock is LockFileEx (gofrs/flock) and the replace is
// MoveFileEx with MOVEFILE_REPLACE_EXISTING|MOVEFILE_WRITE_THROUGH after an
// fsync of the temporary file (write_windows.go).
package state

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
)

// SchemaVersion is the version of the state file's layout. A file with
// another version is refused (exit 2), not guessed at.
const SchemaVersion = 1

// File is the whole state file.
type File struct {
	SchemaVersion int `json:"schema_version"`
	// Saved is when the file was last written.
	Saved time.Time `json:"saved,omitzero"`
	// Sweeps counts the sweeps ever run against this file.
	Sweeps int64 `json:"sweeps,omitempty"`
	// Targets is keyed by target name (names are identity, not URLs).
	Targets map[string]Entry `json:"targets"`
}

// Entry is what one target (by name) carries between runs: the policy's history and
// the facts the next run needs to mark transitions and keep counters.
type Entry struct {
	policy.History
	LastOutcome classify.Outcome `json:"last_outcome,omitempty"`
	LastReason  classify.Reason  `json:"last_reason,omitempty"`
	LastAction  policy.Action    `json:"last_action,omitempty"`
	LastProbe   time.Time        `json:"last_probe,omitzero"`
	// OnsetSweep is the sweep in which the target's current run of
	// decisive failures began (0: not failing decisively). The fleet rule
	// groups targets by it: a chronic failure is not part of a new onset.
	OnsetSweep int64 `json:"onset_sweep,omitempty"`
	// Redeploys counts redeploy decisions ever made (a Prometheus counter
	// that survives short-lived runs).
	Redeploys int64 `json:"redeploys,omitempty"`
	// LastRedeploy is when the last redeploy decision that stood (not held)
	// was made: an alert on "a redeploy in the last N minutes" needs no
	// earlier sample, unlike a counter born at 1 on a target's first sweep.
	LastRedeploy time.Time `json:"last_redeploy,omitzero"`
	// Skipped counts turns skipped because the previous probe was still
	// running.
	Skipped int64 `json:"skipped,omitempty"`
	// HeldFleet and HeldBudget count the redeploys the fleet rule held
	// (hold-fleet, hold-budget).
	HeldFleet  int64 `json:"held_fleet,omitempty"`
	HeldBudget int64 `json:"held_budget,omitempty"`
	// HookPending is written, with the redeploy, before --on-redeploy
	// starts, and cleared once it has ended: a run killed mid-hook leaves
	// it set, and the next run does not redeploy again (at most once).
	HookPending bool      `json:"hook_pending,omitempty"`
	HookStarted time.Time `json:"hook_started,omitzero"`
}

// New returns an empty state.
func New() *File {
	return &File{SchemaVersion: SchemaVersion, Targets: map[string]Entry{}}
}

// Error is a state file that cannot be used: unreadable, corrupt, of
// another schema, or locked by another run for too long. The file is left
// as it was.
type Error struct {
	Path string
	Err  error
	// Locked is true when another run held the lock past the timeout.
	Locked bool
}

func (e *Error) Error() string { return "state " + e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Store is an open, locked state file.
type Store struct {
	path string
	lock io.Closer
}

// LockPath is the lock file of a state file: a sibling FILE.lock.
func LockPath(path string) string { return path + ".lock" }

// Open locks path (through FILE.lock), waiting at most lockTimeout for a run
// that holds it, then reads it. A missing file is an empty state (the first
// run); anything else that cannot be read or parsed is an *Error and the
// lock is released.
func Open(ctx context.Context, path string, lockTimeout time.Duration) (*Store, *File, error) {
	// A symlinked state file is locked, read and replaced at its target;
	// its whole path is judged (locate), and the file itself too: a state
	// file another user owns or can write is refused (TrustInput), as it
	// decides whether a hook runs.
	p, err := locate(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Its directory is missing: the lock is the first file created.
		return nil, nil, &Error{Path: path, Err: fmt.Errorf("lock %s: %v", LockPath(path), unwrapPath(err))}
	}
	if err != nil {
		return nil, nil, &Error{Path: path, Err: err}
	}
	real := p.path
	p.Close()
	if err := inputfile.TrustInput(real, inputfile.State); err != nil {
		return nil, nil, &Error{Path: path, Err: err}
	}
	// The lock is judged as the file is: a planted FILE.lock link is
	// refused, a trusted one locked at its target, and the open itself does
	// not follow a link (one swapped in after the check fails).
	lp, err := locate(LockPath(real))
	if err != nil {
		return nil, nil, &Error{Path: path, Err: err}
	}
	lctx, cancel := context.WithTimeout(ctx, lockTimeout)
	defer cancel()
	lk, err := lockFile(lctx, lp)
	lp.Close()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, &Error{Path: path, Locked: true,
				Err: fmt.Errorf("locked by another run (%s) for more than --lock-timeout %s; giving up", LockPath(real), lockTimeout)}
		}
		if errors.Is(err, context.Canceled) {
			return nil, nil, err
		}
		return nil, nil, &Error{Path: path, Err: fmt.Errorf("lock %s: %v", LockPath(real), unwrapPath(err))}
	}
	s := &Store{path: real, lock: lk}
	f, err := Read(real)
	if err != nil {
		s.Close()
		if se, ok := err.(*Error); ok {
			se.Path = path
		}
		return nil, nil, err
	}
	if err := CheckWritable(real); err != nil {
		s.Close()
		return nil, nil, &Error{Path: path, Err: fmt.Errorf("cannot be written: %v", err)}
	}
	removeStale(real)
	return s, f, nil
}

// Read reads and checks a state file without locking it. A missing file is
// an empty state. It must be a regular file (a FIFO is refused at once, not
// waited on) of at most MaxSize bytes.
func Read(path string) (*File, error) {
	data, err := inputfile.Read(path, inputfile.Kind{Name: inputfile.State.Name, Max: MaxSize()})
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	if err != nil {
		var ie *inputfile.Error
		if errors.As(err, &ie) {
			err = fmt.Errorf("%v; left untouched", ie.Err)
		}
		return nil, &Error{Path: path, Err: err}
	}
	return Parse(path, data)
}

// MaxSize is the largest state file read: inputfile.State's cap, the same
// for every run (a state of 100,000 targets is about 15 MB), past what the
// largest targets file writes. It is not derived from the run's memory
// limit, nor is the number of targets capped: a file the last run wrote is
// read by the next.
func MaxSize() int64 { return inputfile.State.Max }

// Parse checks and decodes a state file's content. An empty file (touch)
// is an empty state.
func Parse(path string, data []byte) (*File, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return New(), nil
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	// A key this healthctl does not know (a newer one's, or an edit) would
	// be dropped by the next save: refuse it instead, so what is accepted
	// is what is written back.
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, &Error{Path: path, Err: fmt.Errorf("corrupt (not the JSON healthctl writes: %v); left untouched: fix or remove it", err)}
	}
	if dec.More() {
		return nil, &Error{Path: path, Err: errors.New("corrupt (data after the JSON object); left untouched: fix or remove it")}
	}
	if f.SchemaVersion != SchemaVersion {
		return nil, &Error{Path: path, Err: fmt.Errorf("schema_version %d, this healthctl reads %d; left untouched", f.SchemaVersion, SchemaVersion)}
	}
	if f.Targets == nil {
		f.Targets = map[string]Entry{}
	}
	if err := f.check(); err != nil {
		return nil, &Error{Path: path, Err: fmt.Errorf("corrupt (%v); left untouched: fix or remove it", err)}
	}
	return &f, nil
}

// check refuses counts no run writes: a negative streak or counter would
// otherwise be carried on ("-4 of 1 decisive failure in a row").
func (f *File) check() error {
	if f.Sweeps < 0 {
		return fmt.Errorf("sweeps %d is negative", f.Sweeps)
	}
	names := make([]string, 0, len(f.Targets))
	for name := range f.Targets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t := f.Targets[name]
		for _, c := range []struct {
			key string
			n   int64
		}{
			{"streak", int64(t.Streak)}, {"timeout_streak", int64(t.TimeoutStreak)}, {"redeploys", t.Redeploys},
			{"skipped", t.Skipped}, {"held_fleet", t.HeldFleet}, {"held_budget", t.HeldBudget},
		} {
			if c.n < 0 {
				return fmt.Errorf("target %q: %s %d is negative", name, c.key, c.n)
			}
		}
	}
	return nil
}

// Save writes f atomically in place of the file. A time JSON cannot hold
// (a year past 9999: validated where times enter, so only a bug gets here)
// is dropped rather than failing the save: one target can never stop the
// fleet's state from being saved.
func (s *Store) Save(f *File) error {
	return s.Prepare(f)()
}

// Prepare is Save in two steps: it readies f for the file now (the one
// change Save makes to f) and returns the write, which only reads f, so
// that other readers of f (the metrics) can run beside it.
func (s *Store) Prepare(f *File) (write func() error) {
	f.SchemaVersion = SchemaVersion
	f.Saved = saneTime(f.Saved)
	for name, t := range f.Targets {
		if !sane(t.StartedAt) || !sane(t.TLSFailingSince) || !sane(t.LastProbe) || !sane(t.HookStarted) {
			t.StartedAt, t.TLSFailingSince = saneTime(t.StartedAt), saneTime(t.TLSFailingSince)
			t.LastProbe, t.HookStarted = saneTime(t.LastProbe), saneTime(t.HookStarted)
			f.Targets[name] = t
		}
	}
	return func() error {
		// As json.MarshalIndent and a newline, with C1 controls, bidi
		// overrides and the BOM in target names escaped as \u009b: the
		// file is read by people (cat, less) too.
		err := WriteFileFunc(s.path, 0o644, func(w io.Writer) error { return encode(w, f) })
		if err != nil {
			return &Error{Path: s.path, Err: err}
		}
		return nil
	}
}

// encode writes f as output.JSONIndent(w, f, " ") does, byte for byte, but
// one target at a time: that builds the whole document in memory, then its
// indented copy (~45 MB at 100,000 targets), where this holds one entry's.
// The escaping of terminal-active characters works rune by rune, so it is
// the same applied to each complete key and entry.
func encode(w io.Writer, f *File) error {
	head := *f
	head.Targets = map[string]Entry{}
	var hb bytes.Buffer
	err := output.JSONIndent(&hb, &head, " ")
	// The document ends with the (empty) targets: the entries go there.
	const tail = "{}\n}\n"
	if err != nil || f.Targets == nil || !bytes.HasSuffix(hb.Bytes(), []byte(tail)) {
		return output.JSONIndent(w, f, " ")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(hb.Bytes()[:hb.Len()-len(tail)])
	if len(f.Targets) == 0 {
		bw.WriteString(tail)
		return bw.Flush()
	}
	names := make([]string, 0, len(f.Targets))
	for name := range f.Targets {
		names = append(names, name)
	}
	sort.Strings(names) // encoding/json's order of map keys
	var buf bytes.Buffer
	keys := json.NewEncoder(&buf)
	keys.SetEscapeHTML(false)
	entries := json.NewEncoder(&buf)
	entries.SetEscapeHTML(false)
	entries.SetIndent("  ", " ")
	bw.WriteByte('{')
	for i, name := range names {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n  ")
		buf.Reset()
		if err := keys.Encode(name); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // the newline Encode adds
		buf.WriteString(": ")
		if err := entries.Encode(f.Targets[name]); err != nil {
			return err
		}
		bw.Write(output.JSONEscape(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))))
	}
	bw.WriteString("\n }\n}\n")
	return bw.Flush()
}

// saneTime is t, or the zero time when JSON cannot encode it.
func saneTime(t time.Time) time.Time {
	if !sane(t) {
		return time.Time{}
	}
	return t
}

// sane reports whether JSON can hold t (its year is 0 to 9999).
func sane(t time.Time) bool {
	y := t.Year()
	return y >= 0 && y <= 9999
}

// Close releases the lock.
func (s *Store) Close() error {
	if s == nil || s.lock == nil {
		return nil
	}
	return s.lock.Close()
}

// WriteFile replaces name with data atomically: a temporary file in the same
// directory, fsync, rename, then an fsync of the directory so the rename
// itself survives a power loss. Readers see the old or the new content,
// never a mix. (Also used for the Prometheus textfile.)
func WriteFile(name string, data []byte, perm os.FileMode) error {
	return WriteFileFunc(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileFunc is WriteFile with the content written by write through a
// buffer, so a large file (10,000 targets' metrics) is never held whole in
// memory. The file is replaced only when write returns nil.
func WriteFileFunc(name string, perm os.FileMode, write func(io.Writer) error) error {
	return writeFileFunc(locate, name, perm, write)
}

// WriteOutputFunc is WriteFileFunc for a file healthctl never reads back
// (the metrics textfile): its directories may belong to another user when
// nobody else can write them (locateOutput).
func WriteOutputFunc(name string, perm os.FileMode, write func(io.Writer) error) error {
	return writeFileFunc(locateOutput, name, perm, write)
}

func writeFileFunc(locate func(string) (*place, error), name string, perm os.FileMode, write func(io.Writer) error) error {
	// A symlink is replaced at its target, never by a regular file; the
	// whole path is judged (locate), and the write is made in the
	// directory as it was opened.
	p, err := locate(name)
	if err != nil {
		return err
	}
	defer p.Close()
	name = p.path
	// Checked again at every write: a long-running watch outlives the
	// check made before its first probe.
	if err := checkRegular(name); err != nil {
		return err
	}
	if err := writeAtomic(p, perm, write); err != nil {
		return err
	}
	// What a killed run left (".NAME123…", beside the resolved file only):
	// old enough that no run writing the same file now owns it.
	removeStaleOlder(name, staleAge)
	return nil
}

// staleAge is how old a temporary file must be before a write without the
// state's lock (the textfile) removes it as a killed run's.
const staleAge = time.Minute
