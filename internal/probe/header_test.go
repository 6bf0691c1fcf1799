package probe

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHeaderValueKeysCanonical: headerValue skips canonicalizing its key,
// so every key the probe asks it for must already be canonical (or it
// would miss what Header.Get finds). The keys are read from the package's
// own source, so a new call with a key that is not canonical fails here.
func TestHeaderValueKeysCanonical(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`headerValue\([\w.]+, ("[^"]*"|[^)]*)\)`)
	keys := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllSubmatch(src, -1) {
			arg := string(m[1])
			if !strings.HasPrefix(arg, `"`) {
				t.Errorf("%s: headerValue(…, %s): the key must be a constant", f, arg)
				continue
			}
			k := strings.Trim(arg, `"`)
			keys++
			if c := http.CanonicalHeaderKey(k); c != k {
				t.Errorf("%s: %q is not canonical (%q)", f, k, c)
			}
			h := http.Header{}
			h.Set(strings.ToLower(k), "v")
			if headerValue(h, k) != h.Get(k) {
				t.Errorf("%s: headerValue %q, Get %q", k, headerValue(h, k), h.Get(k))
			}
		}
	}
	if keys < 7 {
		t.Errorf("found %d headerValue keys in the package's source, want the 7 or more it has", keys)
	}
}
