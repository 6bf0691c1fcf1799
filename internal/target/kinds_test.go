package target

import (
	"strings"
	"testing"
)

// TestServiceURLs: redis and postgres URLs are held to what their probes
// send; the error names what is wrong.
func TestServiceURLs(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://h":                            "",
		"redis://:pw@h:6380/3":                 "",
		"rediss://user:pw@h/0":                 "",
		"REDIS://h":                            "",
		"redis://h/db":                         `path "/db" is not a database number`,
		"redis://h/1/2":                        `path "/1/2" is not a database number`,
		"redis://h?x=1":                        "redis URL has a query",
		"redis://h#f":                          "has a fragment",
		"postgres://h":                         "",
		"postgresql://u:pw@h:5433/app":         "",
		"postgres://h/app?sslmode=require":     "",
		"postgres://h/app?sslmode=disable":     "",
		"postgres://h/app?sslmode=prefer":      `sslmode "prefer" is not disable or require`,
		"postgres://h/app?sslmode=require&a=b": `the parameter "a"`,
		"postgres://h/app?sslmode=require&sslmode=disable": `sslmode "require,disable"`,
		"postgres://h/a/b":   "more than a database name",
		"postgres://h/a%01b": "control character",
		"mysql://h":          `unsupported scheme "mysql"`,
	} {
		_, err := ParseURL(raw)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}
