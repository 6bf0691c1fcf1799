//go:build unix

package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrustInput: sshd's StrictModes rule on a file a command can come
// from — refused when others can write it or a directory above it
// (unless sticky); a missing file, /dev/null and a FIFO are left to Read.
// Needs no root: the files are the test's own, their modes changed.
func TestTrustInput(t *testing.T) {
	base := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("watch: {}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	ok := write("ok.yaml", 0o644)
	anyone := write("anyone.yaml", 0o666)
	inOpen := write("open/c.yaml", 0o644)
	os.Chmod(filepath.Dir(inOpen), 0o777)
	inSticky := write("sticky/c.yaml", 0o644)
	os.Chmod(filepath.Dir(inSticky), 0o777|os.ModeSticky)
	link := filepath.Join(base, "link.yaml")
	os.Symlink(anyone, link)
	for _, c := range []struct {
		path, want string
	}{
		{ok, ""},
		{inSticky, ""},
		{filepath.Join(base, "missing.yaml"), ""},
		{os.DevNull, ""},
		{anyone, "anyone.yaml is writable by anyone (mode 0666)"},
		{link, "anyone.yaml is writable by anyone (mode 0666)"},
		{inOpen, "directory " + filepath.Dir(inOpen) + " (above the config file) is writable by anyone (mode 0777)"},
	} {
		err := TrustInput(c.path, Config)
		var te *TrustError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("TrustInput(%s) = %v, want nil", c.path, err)
		case c.want != "" && (!errors.As(err, &te) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "chmod go-w")):
			t.Errorf("TrustInput(%s) = %v, want a TrustError with %q and the fix", c.path, err, c.want)
		}
	}
}
