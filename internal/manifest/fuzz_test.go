package manifest

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzLint: any file is a *ParseError naming it and a line within it, or
// findings that each name the file and a line within it; it never panics
// and never takes long (YAML aliases are bounded by the decoder).
func FuzzLint(f *testing.F) {
	f.Add([]byte(goodDeployment))
	f.Add([]byte(strings.Replace(goodDeployment, `["node", "server.js"]`, `["sh", "-c", "node server.js; echo bye"]`, 1)))
	f.Add([]byte("services:\n  app:\n    image: x\n    stop_grace_period: 1s\n    environment: [PRE_DRAIN_MS=99999999999999999999]\n"))
	f.Add([]byte("services:\n  app:\n    command: sh -c 'sleep 1; exec app'\n    environment:\n      SHUTDOWN_TIMEOUT_MS: '-1'\n"))
	f.Add([]byte("kind: Deployment\nspec: {template: {spec: {terminationGracePeriodSeconds: 9223372036854775807, containers: [{name: a}]}}}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("---\n---\nkind: Pod\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := yamlLines(data)
		res, err := Lint("m.yaml", data, Timing{PreDrain: 5 * time.Second, ShutdownTimeout: 20 * time.Second})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "m.yaml" || pe.Line < 0 || pe.Line > lines {
				t.Fatalf("error %q (%#v) does not name the file and a line in it", err, err)
			}
			return
		}
		for _, fd := range res.Findings {
			if fd.File != "m.yaml" || fd.Line < 0 || fd.Line > lines || fd.Name == "" {
				t.Fatalf("finding %+v: no name, or not a line of the file (%d lines)", fd, lines)
			}
		}
	})
}

// FuzzSplitWords: a command line splits into words or fails; split words
// never hold the quotes that delimited them unbalanced.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{`node server.js`, `sh -c 'sleep 1; exec app'`, `a "b c" d\ e`, `'unterminated`, `"\"`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitWords(s)
		if err != nil {
			return
		}
		for _, w := range words {
			if w == "" && !strings.ContainsAny(s, `'"`) {
				t.Fatalf("SplitWords(%q) = %q: an empty word without quotes", s, words)
			}
		}
		_, _ = SleepOf(words)
		_, _ = Wrapper(words)
	})
}

// yamlLines is how many lines YAML sees in data: a line break is CR LF, LF
// or a lone CR (YAML 1.2 §5.4), so "a\rb" is two lines to the decoder and
// its line numbers, though one to strings.Count(data, "\n") (FuzzLint's
// oracle counted only LF until a lone CR in a flow sequence was found).
func yamlLines(data []byte) int {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return strings.Count(s, "\n") + strings.Count(s, "\r") + 1
}
