package watch

import (
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/target"
	"github.com/healthctl/healthctl/internal/targetsfile"
)

func newBuilder() *Builder {
	return &Builder{Base: target.Defaults(), Getenv: func(string) string { return "" }, File: "t.yaml"}
}

// TestBuilderURLs: a URL argument is named by its redacted URL; two that
// differ only in a password are two targets, numbered; the same URL twice
// is an error naming both as URL arguments.
func TestBuilderURLs(t *testing.T) {
	b := newBuilder()
	if out, err := b.URLs(nil); err != nil || out != nil {
		t.Fatalf("no URLs: %v, %v", out, err)
	}
	out, err := b.URLs([]string{"redis://:pw1111@127.0.0.1:1", "redis://:pw2222@127.0.0.1:1", "http://127.0.0.1:1/health"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range out {
		names = append(names, e.Name)
		if e.Options == nil || !e.Recover || e.URL == "" || strings.Contains(e.URL, "pw") {
			t.Errorf("%q: %+v", e.Name, e)
		}
	}
	if got, want := strings.Join(names, "|"), "redis://***@127.0.0.1:1|redis://***@127.0.0.1:1 (2)|http://127.0.0.1:1/health"; got != want {
		t.Errorf("names %q, want %q", got, want)
	}
	_, err = b.URLs([]string{"http://127.0.0.1:1/", "http://127.0.0.1:1/"})
	if err == nil || err.Error() != `URL argument: target "http://127.0.0.1:1/" given twice (first: URL argument)` {
		t.Errorf("the same URL twice: %v", err)
	}
	if _, err := b.URLs([]string{"gopher://127.0.0.1:1/"}); err == nil {
		t.Errorf("an unsupported scheme built")
	}
}

// TestBuilderEntries: the file's entries follow the URL arguments, a name
// the file shares with one is an error naming the line, an entry without
// a URL has no options, and entries with the same option values share one
// template (counted once).
func TestBuilderEntries(t *testing.T) {
	b := newBuilder()
	fts, err := targetsfile.ParseTargets("t.yaml", []byte(`targets:
  - name: a
    url: http://127.0.0.1:1/a
    expect_status: "200"
  - name: b
    url: http://127.0.0.1:1/b
    expect_status: "200"
  - name: c
  - name: d
    url: http://127.0.0.1:1/d
`))
	if err != nil {
		t.Fatal(err)
	}
	out, own, err := b.Entries(nil, fts)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 4 || own != 1 {
		t.Fatalf("%d endpoints, %d own templates; want 4, 1", len(out), own)
	}
	for _, e := range out {
		switch {
		case e.Name == "c":
			if e.Build != nil || e.Options != nil || e.URL != "" {
				t.Errorf("c (no url:) has options: %+v", e)
			}
		case e.Build == nil:
			t.Errorf("%s: no Build", e.Name)
		default:
			o, err := e.Build()
			if err != nil || o.URL.Path != "/"+e.Name {
				t.Errorf("%s: built %v, %v", e.Name, o, err)
			}
		}
	}
	urls, err := b.URLs([]string{"http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	clash, err := targetsfile.ParseTargets("t.yaml", []byte("targets:\n  - name: x\n  - name: \"http://127.0.0.1:1/\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = b.Entries(urls, clash)
	if err == nil || err.Error() != `t.yaml:3: target "http://127.0.0.1:1/" given twice (first: URL argument)` {
		t.Errorf("a file name clashing with a URL argument: %v", err)
	}
	bad, err := targetsfile.ParseTargets("t.yaml", []byte("targets:\n  - name: x\n    url: http://127.0.0.1:1/\n    expect_status: banana\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err = b.Entries(nil, bad); err == nil || !strings.HasPrefix(err.Error(), `t.yaml:4: target "x": expect_status "banana": `) {
		t.Errorf("a bad value: %v", err)
	}
}
