// Package source names where a value came from — a flag (--interval), an
// environment variable (HEALTHCTL_WAIT_HEALTHY_INTERVAL), a config file key
// or a targets file line — and quotes the value after it the way the user
// typed it there. It is pure and imports nothing of healthctl's, so the
// config loader and the input room (internal/target) share one rule.
package source

import (
	"strconv"
	"strings"
)

// Annotation and RawAnnotation are the pflag annotation keys under which
// the config loader records, on a flag it set, where the value came from
// (a variable, or the config file and key) and the text it was given there
// (redacted where the flag is a secret). The command side reads them back
// to name a value; plain strings, so this room imports no flag library.
const (
	Annotation    = "healthctl-source"
	RawAnnotation = "healthctl-raw"
)

// Quote is source followed by value, quoted: NAME="v" for a variable,
// --flag "v" or "file:3 "v"" otherwise.
func Quote(source, value string) string { return Join(source, strconv.Quote(value)) }

// Join is source followed by an already formatted value: NAME=v for a
// variable, a space between them otherwise.
func Join(source, value string) string {
	if IsVariable(source) {
		return source + "=" + value
	}
	return source + " " + value
}

// IsVariable reports whether a source names an environment variable
// (HEALTHCTL_X), not a flag (--x) or a file ("config f: key", "f:3").
func IsVariable(source string) bool {
	if source == "" || strings.ContainsAny(source, " :") || strings.HasPrefix(source, "-") {
		return false
	}
	return strings.ToUpper(source) == source
}
