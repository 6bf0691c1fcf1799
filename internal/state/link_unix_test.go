//go:build unix

package state

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// plantedDir is a shared sticky directory (mode 1777, as /tmp) holding
// links owned by nobody (uid 65534): what another user can plant there.
// It needs root, to give a link away with Lchown.
func plantedDir(t *testing.T) (dir, victims string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: a link owned by another user is made with Lchown")
	}
	base := t.TempDir()
	dir, victims = filepath.Join(base, "shared"), filepath.Join(base, "victims")
	for _, d := range []string{dir, victims} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o1777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return dir, victims
}

func plant(t *testing.T, link, to string, uid int) {
	t.Helper()
	if err := os.Symlink(to, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// TestPlantedLinksRefused: nobody's links in a shared sticky directory —
// the textfile to an existing file, the state to one to create, the lock
// too — are refused naming the link; nothing is written, created or
// removed anywhere.
func TestPlantedLinksRefused(t *testing.T) {
	dir, victims := plantedDir(t)
	passwd := filepath.Join(victims, "passwd")
	if err := os.WriteFile(passwd, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A stale-looking temporary file beside the victim: a clean-up in the
	// resolved directory would remove it.
	stale := filepath.Join(victims, ".passwd123")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)
	prom := filepath.Join(dir, "healthctl.prom")
	plant(t, prom, passwd, 65534)
	statePath := filepath.Join(dir, "state.json")
	plant(t, statePath, filepath.Join(victims, "created-by-attacker"), 65534)

	var le *LinkError
	if err := CheckWritable(prom); !errors.As(err, &le) || le.Link != prom || !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("CheckWritable(planted) = %v, want a LinkError naming %s", err, prom)
	}
	if err := WriteFile(prom, []byte("probe_success 1\n"), 0o644); !errors.As(err, &le) {
		t.Errorf("WriteFile(planted) = %v, want a LinkError", err)
	}
	if _, _, err := Open(context.Background(), statePath, time.Second); !errors.As(err, &le) || !strings.Contains(err.Error(), statePath) {
		t.Errorf("Open(planted) = %v, want a LinkError naming %s", err, statePath)
	}

	// A plain state file in the shared directory, its lock planted.
	own := filepath.Join(dir, "own.json")
	plant(t, LockPath(own), filepath.Join(victims, "lock-by-attacker"), 65534)
	if _, _, err := Open(context.Background(), own, time.Second); !errors.As(err, &le) || le.Link != LockPath(own) {
		t.Errorf("Open(planted lock) = %v, want a LinkError naming the lock", err)
	}

	if b, _ := os.ReadFile(passwd); string(b) != "root:x:0:0\n" {
		t.Errorf("the victim was written: %q", b)
	}
	ents, _ := os.ReadDir(victims)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the victims' directory changed: %v", names)
	}
	if _, err := os.Stat(own); err == nil {
		t.Error("own.json was created")
	}
}

// TestTrustedLinksFollowed: root's own link in the sticky directory, and a
// link in a directory only its owner writes, are followed as before.
func TestTrustedLinksFollowed(t *testing.T) {
	dir, victims := plantedDir(t)
	vol := filepath.Join(victims, "m.prom")
	link := filepath.Join(dir, "m.prom")
	plant(t, link, vol, 0)
	if err := WriteFile(link, []byte("x 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(vol); string(b) != "x 1\n" {
		t.Fatalf("target holds %q", b)
	}
	// World-writable without the sticky bit: anyone could swap the link.
	open := filepath.Join(filepath.Dir(dir), "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	l2 := filepath.Join(open, "m.prom")
	plant(t, l2, vol, 0)
	var de *DirError
	if err := WriteFile(l2, []byte("y 1\n"), 0o644); !errors.As(err, &de) || de.Dir != open || !strings.Contains(err.Error(), "writable by anyone (mode 0777, not sticky") {
		t.Fatalf("WriteFile(link in a 0777 dir) = %v, want a DirError naming %s", err, open)
	}
}

// TestPlantedDirectoryRefused: the round-five attack — nobody makes
// shared/hc a link to a directory of root's (victim), or a directory of
// its own, in the sticky shared directory; root's state file, lock,
// textfile and their temporary files under shared/hc are refused naming
// the link or directory and its owner, and victim is untouched. Each
// case was followed (victim written) before locate judged every
// component of the path.
func TestPlantedDirectoryRefused(t *testing.T) {
	dir, victim := plantedDir(t)
	os.WriteFile(filepath.Join(victim, "m.prom"), []byte("root's\n"), 0o644)
	hc := filepath.Join(dir, "hc")
	plant(t, hc, victim, 65534)
	statePath, prom := filepath.Join(hc, "state.json"), filepath.Join(hc, "m.prom")
	var le *LinkError
	check := func(what string, err error) {
		t.Helper()
		if !errors.As(err, &le) || le.Link != hc || !strings.Contains(err.Error(), "uid 65534 (nobody)") {
			t.Errorf("%s = %v, want a LinkError naming %s and its owner", what, err, hc)
		}
	}
	check("CheckWritable", CheckWritable(prom))
	check("WriteFile", WriteFile(prom, []byte("x 1\n"), 0o644))
	_, _, err := Open(context.Background(), statePath, time.Second)
	check("Open", err)
	if b, _ := os.ReadFile(filepath.Join(victim, "m.prom")); string(b) != "root's\n" {
		t.Errorf("victim/m.prom was written: %q", b)
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 1 {
		t.Errorf("victim holds %d files, want 1", len(ents))
	}

	// nobody's own directory in the shared one: refused naming its owner.
	os.Remove(hc)
	os.Mkdir(hc, 0o755)
	os.Chown(hc, 65534, 65534)
	var de *DirError
	if err := WriteFile(prom, []byte("x 1\n"), 0o644); !errors.As(err, &de) || de.Dir != hc || !strings.Contains(err.Error(), "owned by uid 65534 (nobody)") {
		t.Errorf("WriteFile(in nobody's directory) = %v, want a DirError naming %s", err, hc)
	}
	if _, _, err := Open(context.Background(), statePath, time.Second); !errors.As(err, &de) {
		t.Errorf("Open(in nobody's directory) = %v, want a DirError", err)
	}
	if ents, _ := os.ReadDir(hc); len(ents) != 0 {
		t.Errorf("nobody's directory holds %d files, want none", len(ents))
	}
	// A file of nobody's where the state would be written.
	os.Chown(hc, 0, 0)
	os.WriteFile(prom, nil, 0o644)
	os.Chown(prom, 65534, 65534)
	if err := WriteFile(prom, []byte("x 1\n"), 0o644); !errors.As(err, &de) || !de.File {
		t.Errorf("WriteFile(over nobody's file) = %v, want a DirError for the file", err)
	}
}

// TestLinkedDirectoryOfOwnFollowed: a directory link of root's own (a
// mounted volume) is followed, and the file is written there.
func TestLinkedDirectoryOfOwnFollowed(t *testing.T) {
	dir, victim := plantedDir(t)
	hc := filepath.Join(dir, "hc")
	plant(t, hc, victim, 0)
	s, _, err := Open(context.Background(), filepath.Join(hc, "state.json"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(New()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(victim, "state.json")); err != nil {
		t.Error(err)
	}
}

// TestOutputInAnotherUsersDirectory: the metrics textfile may be written
// under a directory of another user's that nobody else can write — Debian's
// /var/lib/prometheus (the prometheus user's) holding node-exporter (root's)
// — while the state file, which is read back, may not; a directory others
// can write, or another user's link on the way, is refused for both.
func TestOutputInAnotherUsersDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a directory owned by another user is made with Chown")
	}
	base := filepath.Join(t.TempDir(), "prometheus")
	dir := filepath.Join(base, "node-exporter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(base, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	prom := filepath.Join(dir, "healthctl.prom")
	write := func(w io.Writer) error { _, err := io.WriteString(w, "x 1\n"); return err }
	if err := CheckOutputWritable(prom); err != nil {
		t.Fatalf("CheckOutputWritable = %v, want the textfile accepted", err)
	}
	if err := WriteOutputFunc(prom, 0o644, write); err != nil {
		t.Fatalf("WriteOutputFunc = %v", err)
	}
	if b, _ := os.ReadFile(prom); string(b) != "x 1\n" {
		t.Errorf("textfile holds %q", b)
	}
	var de *DirError
	if err := CheckWritable(filepath.Join(dir, "state.json")); !errors.As(err, &de) || de.Dir != base {
		t.Errorf("CheckWritable(state) = %v, want a DirError naming %s", err, base)
	}
	// Writable by others: refused for the textfile too.
	os.Chmod(base, 0o777)
	if err := WriteOutputFunc(prom, 0o644, write); !errors.As(err, &de) || de.Dir != base {
		t.Errorf("WriteOutputFunc(others can write) = %v, want a DirError naming %s", err, base)
	}
	os.Chmod(base, 0o755)
	// nobody's link on the way: refused.
	os.RemoveAll(dir)
	victim := filepath.Join(filepath.Dir(base), "victim")
	os.Mkdir(victim, 0o755)
	plant(t, dir, victim, 65534)
	var le *LinkError
	if err := WriteOutputFunc(prom, 0o644, write); !errors.As(err, &le) {
		t.Errorf("WriteOutputFunc(nobody's link) = %v, want a LinkError", err)
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 0 {
		t.Errorf("victim holds %d files, want none", len(ents))
	}
}
