package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
)

// TestReasonCoverage fails when some reason (other than no_url, which only a
// targets file can produce) is asserted by no script. The assertion must be
// a positive stdout line naming the reason in JSON, such as
//
//	stdout '"reason":"conn_refused"'
//
// and since a script only passes when its assertions hold, every reason is
// then proven to be emitted by healthctl against a real fixture.
func TestReasonCoverage(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	// A positive stdout assertion (not "! stdout") whose pattern names a
	// reason as JSON does; the pattern may hold more around it.
	assertion := regexp.MustCompile(`^\s*(?:\[[^\]]*\]\s*)*stdout\s+(?:-count=\d+\s+)?'([^']*)'`)
	reasonRE := regexp.MustCompile(`"reason":"([a-z_]+)"`)
	seen := map[classify.Reason][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range scriptLines(string(data)) {
			m := assertion.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			for _, r := range reasonRE.FindAllStringSubmatch(m[1], -1) {
				seen[classify.Reason(r[1])] = append(seen[classify.Reason(r[1])], filepath.Base(f))
			}
		}
	}
	for _, r := range classify.Reasons {
		if r == classify.NoURL {
			continue
		}
		if len(seen[r]) == 0 {
			t.Errorf("reason %s is asserted by no script (want a line like stdout '\"reason\":\"%s\"' in testdata/script/*.txtar)", r, r)
		}
	}
	known := map[classify.Reason]bool{}
	for _, r := range classify.Reasons {
		known[r] = true
	}
	for r, fs := range seen {
		if !known[r] {
			t.Errorf("scripts %v assert reason %q, which classify does not define", fs, r)
		}
	}
}

// scriptLines returns the script part of a txtar archive (before the first
// file marker).
func scriptLines(archive string) []string {
	var lines []string
	for _, l := range strings.Split(archive, "\n") {
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(strings.TrimSpace(l), " --") {
			break
		}
		lines = append(lines, l)
	}
	return lines
}
