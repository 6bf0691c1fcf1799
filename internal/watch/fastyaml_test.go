package watch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"go.yaml.in/yaml/v3"
)

// yamlRoot is yaml.v3's root node of data, nil when yaml.v3 refuses it.
func yamlRoot(data []byte) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

// sameTree says where two node trees differ ("" when they do not).
func sameTree(a, b *yaml.Node, path string) string {
	switch {
	case a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || a.Style != b.Style:
		return fmt.Sprintf("%s: kind/tag/value/style %v %q %q %v vs yaml.v3's %v %q %q %v", path, a.Kind, a.Tag, a.Value, a.Style, b.Kind, b.Tag, b.Value, b.Style)
	case a.Line != b.Line || a.Column != b.Column:
		return fmt.Sprintf("%s (%q): at %d:%d vs yaml.v3's %d:%d", path, a.Value, a.Line, a.Column, b.Line, b.Column)
	case a.Anchor != b.Anchor || a.Alias != nil || b.Alias != nil || a.HeadComment+a.LineComment+a.FootComment != b.HeadComment+b.LineComment+b.FootComment:
		return path + ": anchor, alias or comments"
	case len(a.Content) != len(b.Content):
		return fmt.Sprintf("%s: %d children vs yaml.v3's %d", path, len(a.Content), len(b.Content))
	}
	for i := range a.Content {
		if d := sameTree(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
	}
	return ""
}

// checkFast: what the fast path accepts, yaml.v3 accepts with the same
// tree.
func checkFast(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := fastYAML(data)
	if !ok {
		return false
	}
	want := yamlRoot(data)
	if want == nil {
		t.Fatalf("the fast path read what yaml.v3 refuses:\n%s", data)
	}
	if d := sameTree(got, want, "root"); d != "" {
		t.Fatalf("%s\nin:\n%s", d, data)
	}
	return true
}

// trickyValues are scalars at and past the edge of the plain style.
var trickyValues = []string{
	"api", "http://127.0.0.1:8080/health", "http://[::1]:80/x?a=1&b=2", "true", "True", "yes", "no", "on", "off",
	"null", "Null", "~", "123", "-1", "+1", "0x1F", "0o17", "017", "1e3", "1_000", ".inf", "-.inf", ".nan", "3.25",
	"2026-12-01", "2026-12-01T10:00:00Z", "1764500000", "a: b", "a:b", "a :b", "a:", ":a", "*x", "&a", "!tag", "!!str",
	"[a]", "{a}", "a,b", "a [b]", "a]", "a}", "a  b", "a - b", "- a", "-a", "?a", "a?", "...", "---", "..a", "%x", "@x",
	"`x", "<<", "=", "a #b", "a#b", "a\tb", "é", "", " lead", "trail ", "'q'", "\"q\"", "|", ">", "a|b", "a>b", "X-Probe:1",
	"Authorization:Bearer x", "200-299", "200,204", "500ms", "2s", "/health", "./x", "a\\b",
}

var trickyKeys = []string{"name", "url", "headers", "expect_status", "recover", "started_at", "method", "x-y", "true", "null", "y", "a1", "1a", "-a", "a b", "_x", "<<", "?"}

// genFile writes a random file from a grammar of targets-file-like YAML
// with random slips: indentation, compact lists, nested blocks, tricky
// keys and values.
func genFile(r *rand.Rand) []byte {
	var b bytes.Buffer
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	val := func() string {
		if r.IntN(3) == 0 {
			return pick(trickyValues)
		}
		return pick(trickyValues[:3])
	}
	if r.IntN(4) == 0 {
		b.WriteString("defaults:\n")
		for range 1 + r.IntN(3) {
			fmt.Fprintf(&b, "  %s: %s\n", pick(trickyKeys), val())
		}
	}
	b.WriteString("targets:\n")
	ind := strings.Repeat(" ", r.IntN(4))
	for i := range 1 + r.IntN(6) {
		fmt.Fprintf(&b, "%s- name: env-%d\n", ind, i)
		for range r.IntN(4) {
			k := pick(trickyKeys)
			switch r.IntN(6) {
			case 0:
				fmt.Fprintf(&b, "%s  %s:\n", ind, k)
				sub := ind + "  " + strings.Repeat(" ", r.IntN(3))
				for range 1 + r.IntN(3) {
					fmt.Fprintf(&b, "%s- %s\n", sub, val())
				}
			case 1:
				fmt.Fprintf(&b, "%s  %s:\n%s    %s: %s\n", ind, k, ind, pick(trickyKeys), val())
			default:
				fmt.Fprintf(&b, "%s  %s: %s\n", ind, k, val())
			}
		}
		if r.IntN(8) == 0 {
			b.WriteString("\n")
		}
	}
	out := b.Bytes()
	if r.IntN(5) == 0 && len(out) > 0 {
		// A slip: a byte changed, dropped or doubled.
		i := r.IntN(len(out))
		switch r.IntN(3) {
		case 0:
			out[i] = " :-\n#\"x\t"[r.IntN(8)]
		case 1:
			out = append(out[:i], out[i+1:]...)
		default:
			out = append(out[:i+1], out[i:]...)
		}
	}
	return out
}

// TestFastYAMLAgreesWithYAMLv3 over generated files: every file the fast
// path reads, yaml.v3 reads the same (kind, tag, value, style, line and
// column of every node); and the fast path takes the plain files whole.
func TestFastYAMLAgreesWithYAMLv3(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	taken := 0
	const n = 4000
	for range n {
		if checkFast(t, genFile(r)) {
			taken++
		}
	}
	t.Logf("the fast path took %d of %d generated files", taken, n)
	if taken < n/10 {
		t.Errorf("the fast path took only %d of %d files", taken, n)
	}
	plain := []byte("targets:\n  - name: api\n    url: http://127.0.0.1:8080/health\n    headers:\n      - X-Probe:1\n" +
		"  - name: web\n    url: http://[::1]:80/\n    expect_status: 200-299\n    recover: false\n")
	if !checkFast(t, plain) {
		t.Error("the fast path refused a plain targets file")
	}
}

// TestFastYAMLOnTheTestFiles: every YAML file of the test scripts is read
// alike by both (or left to yaml.v3).
func TestFastYAMLOnTheTestFiles(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("..", "..", "testdata", "script", "*.txtar"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no test scripts: %v", err)
	}
	files, taken := 0, 0
	for _, s := range scripts {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range txtar.Parse(data).Files {
			if strings.HasSuffix(f.Name, ".yaml") || strings.HasSuffix(f.Name, ".yml") {
				files++
				if checkFast(t, f.Data) {
					taken++
				}
			}
		}
	}
	t.Logf("the fast path took %d of the scripts' %d YAML files", taken, files)
}

// FuzzFastYAML: go test -fuzz FuzzFastYAML ./internal/watch
func FuzzFastYAML(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		f.Add(genFile(r))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFast(t, data)
	})
}

// parseBoth is ParseTargets with the fast path and with yaml.v3 alone.
func parseBoth(data []byte) (fast, slow []FileEntry, fastErr, slowErr error) {
	fast, fastErr = ParseTargets("t.yaml", data)
	yamlOnly = true
	defer func() { yamlOnly = false }()
	slow, slowErr = ParseTargets("t.yaml", data)
	return
}

// checkSame: the targets (and the error) a file gives are the same with
// and without the fast path.
func checkSame(t *testing.T, data []byte) {
	t.Helper()
	fast, slow, fe, se := parseBoth(data)
	if fmt.Sprint(fe) != fmt.Sprint(se) {
		t.Fatalf("errors differ: fast path %v, yaml.v3 %v\nin:\n%s", fe, se, data)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("targets differ:\nfast path %+v\nyaml.v3   %+v\nin:\n%s", fast, slow, data)
	}
}

// TestParseTargetsSameWithoutFastPath: over the generated files, whole
// targets and errors alike, not only the node trees.
func TestParseTargetsSameWithoutFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		checkSame(t, genFile(r))
	}
}

// FuzzParseTargetsSameWithoutFastPath: go test -fuzz FuzzParseTargetsSame ./internal/watch
func FuzzParseTargetsSameWithoutFastPath(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 50 {
		f.Add(genFile(r))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkSame(t, data) })
}
