package targetsfile

import (
	"errors"
	"testing"
)

// countLines counts lines as editors and the YAML decoder do: LF, CRLF
// and a bare CR each end one.
func countLines(data []byte) int {
	n := 1
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			n++
		case '\r':
			n++
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
		}
	}
	return n
}

// FuzzParseTargets: any targets file is a *TargetsError naming the file
// (and a line within the file when it names one — or the line after the
// last, where the YAML decoder puts the end of the file: "---" alone is
// line 2) or targets with unique
// non-empty names, lines within the file and start times JSON can write.
func FuzzParseTargets(f *testing.F) {
	for _, s := range []string{
		"targets:\n  - name: api\n    url: http://127.0.0.1:8080/health\n",
		"defaults:\n  connect_timeout: 1s\ntargets:\n  - name: a\n    url: http://h/\n    started_at: 1764504000\n    recover: false\n",
		"targets:\n  - &x {name: a, url: 'http://h/'}\n  - <<: *x\n    name: b\n",
		"targets:\n  - name: a\n  - name: a\n",
		"targets: []\n---\ntargets: []\n",
		"targets:\n  - name: \"\\e[31m\"\n    url: http://h/\n    headers: ['Authorization: Bearer x']\n",
		"targets:\n  - name: a\n    started_at: 1764504000000\n",
		"targets:\n  - name: a\n    started_at: '10000-01-01T00:00:00Z'\n",
		"", "targets: 5", "[", "targets:\n  - {}\n",
		"targets:\r  - name: a\r  - name: a\r", "targets:\r\n  - name: a\r\n  - name: b\r\n    urll: x\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := countLines(data)
		parseBoth(t, data, 1) // the sliced read, when it takes data, is the whole read
		fts, err := ParseTargets("t.yaml", data)
		if err != nil {
			var te *TargetsError
			if !errors.As(err, &te) || te.File != "t.yaml" || te.Line < 0 || te.Line > lines+1 {
				t.Fatalf("error %q (%#v) does not name the file and a line in it", err, err)
			}
			return
		}
		names := map[string]bool{}
		for _, ft := range fts {
			if ft.Name == "" || names[ft.Name] {
				t.Fatalf("target name %q empty or given twice", ft.Name)
			}
			names[ft.Name] = true
			if ft.Line < 1 || ft.Line > lines {
				t.Fatalf("target %q at line %d of %d", ft.Name, ft.Line, lines)
			}
			if !ft.StartedAt.IsZero() {
				if _, err := ft.StartedAt.MarshalJSON(); err != nil {
					t.Fatalf("target %q started_at %v: %v", ft.Name, ft.StartedAt, err)
				}
			}
		}
	})
}
