package httpprobe

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/probe/session"
)

// TestHeaderValueKeysCanonical: headerValue skips canonicalizing its key,
// so every key the probe asks it for must already be canonical (or it
// would miss what Header.Get finds). The keys are read from the package's
// own source, so a new call with a key that is not canonical fails here.
func TestHeaderValueKeysCanonical(t *testing.T) {
	// The probe's packages: the front door and the ones under it.
	var files []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`(?:session\.H|h)eaderValue\([\w.]+, ("[^"]*"|[^)]*)\)`)
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
				t.Errorf("%s: HeaderValue(…, %s): the key must be a constant", f, arg)
				continue
			}
			k := strings.Trim(arg, `"`)
			keys++
			if c := http.CanonicalHeaderKey(k); c != k {
				t.Errorf("%s: %q is not canonical (%q)", f, k, c)
			}
			h := http.Header{}
			h.Set(strings.ToLower(k), "v")
			if session.HeaderValue(h, k) != h.Get(k) {
				t.Errorf("%s: headerValue %q, Get %q", k, session.HeaderValue(h, k), h.Get(k))
			}
		}
	}
	if keys < 7 {
		t.Errorf("found %d headerValue keys in the package's source, want the 7 or more it has", keys)
	}
}

// TestHeaderConditionSeesEncoding: --expect-header judges the headers the
// server sent, also when Go decoded the gzip it asked for and removed
// Content-Encoding (the HTTP/1.1 exchange and the Transport alike); curl's
// -D dump of the same answer has it (TestCurlDiff's
// nginx/json-gzip-encoding-header).
func TestHeaderConditionSeesEncoding(t *testing.T) {
	body := []byte(`{"status":"ready"}`)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(body)
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/gz" && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz.Bytes())
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, path, cond string
		header           http.Header
		pass             bool
	}{
		{name: "decoded by Go", path: "/gz", cond: "Content-Encoding=^gzip$", pass: true},
		{name: "decoded by Go, other header", path: "/gz", cond: "Content-Type=^application/json$", pass: true},
		{name: "asked by -H", path: "/gz", cond: "Content-Encoding=^gzip$", header: http.Header{"Accept-Encoding": {"gzip"}}, pass: true},
		{name: "not encoded", path: "/plain", cond: "Content-Encoding=gzip", pass: false},
		{name: "Accept-Encoding removed", path: "/gz", cond: "Content-Encoding=gzip", header: http.Header{"Accept-Encoding": {""}}, pass: false},
	} {
		for _, only := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/transport=%v", tc.name, only), func(t *testing.T) {
				o := plainOpts(t, srv.URL+tc.path)
				if tc.header != nil {
					o.Header = tc.header
				}
				name, expr, _ := strings.Cut(tc.cond, "=")
				o.Expect.HeaderRE = []expect.HeaderExpect{{Name: name, RE: regexp.MustCompile(expr)}}
				o.Expect.JSON = []expect.JSONExpect{{Path: "status", Value: "ready"}}
				r := newRun(o, hooks{Transport: only}).do(context.Background())
				if got := r.Outcome == classify.Pass; got != tc.pass {
					t.Errorf("%s %s (%s), want pass %v", r.Outcome, r.Reason, r.Error, tc.pass)
				}
			})
		}
	}
}
