// Package target builds a probe's options from what a user typed: flags,
// environment variables, the config file, or an entry of watch's targets
// file. Every caller gets the same validation, and every error names where
// the bad value came from (`--resolve`, `HEALTHCTL_RESOLVE`,
// `config healthctl.yaml: probe.resolve`, `targets.yaml:12: target "api"`).
//
// Errors are *Error; only cmd/healthctl turns them into exit code 2.
package target

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/source"
)

// Error is bad user input, with where it came from.
type Error struct {
	// Source names the flag, variable, or file and key of the value.
	Source string
	Err    error
}

func (e *Error) Error() string {
	if e.Source == "" {
		return e.Err.Error()
	}
	return e.Source + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Input is the raw user input for a probe's options, one field per probe
// flag, as typed.
type Input struct {
	Headers []string
	Method  string
	Data    string
	// Stdin is what --data @- reads; nil: there is none (an error).
	Stdin        io.Reader
	User         string
	UserAgent    string
	IPv4, IPv6   bool
	AllAddresses bool
	Insecure     bool
	CACert       string
	// ProxyInsecure and ProxyCACert are --proxy-insecure and
	// --proxy-cacert: an https:// proxy's own verification, apart from
	// the target's (curl's names).
	ProxyInsecure   bool
	ProxyCACert     string
	Cert, Key       string
	ServerName      string
	Resolve         []string
	DNSServer       string
	Follow          int
	NoProxy         string
	ConnectTimeout  time.Duration
	ReadTimeout     time.Duration
	MaxTime         time.Duration
	MaxBody         int64
	ExpectStatus    string
	ExpectBody      []string
	ExpectBodyRegex []string
	ExpectJSON      []string
	ExpectHeader    []string
	// ExpectBodyNot and ExpectHeaderNot are the negative conditions;
	// DegradedIfBody and DegradedIfJSON mark a pass as degraded.
	ExpectBodyNot   []string
	ExpectHeaderNot []string
	DegradedIfBody  []string
	DegradedIfJSON  []string
	SecretHeader    []string
	SecretParam     []string
	GRPCService     string
	HTTP2Prior      bool
	// Dialogue is --dialogue's steps: expect:RE, send:TEXT, starttls.
	Dialogue []string

	// Sources names where the value of a flag (by flag name, "header")
	// came from when not the command line: a variable, a config file key,
	// a targets file line or a module. A flag it does not name is "--flag".
	Sources map[string]string
}

// Defaults returns the input every command starts from.
func Defaults() Input {
	return Input{
		ConnectTimeout: scheme.DefaultConnectTimeout,
		ReadTimeout:    scheme.DefaultReadTimeout,
		MaxBody:        scheme.DefaultMaxBody,
		ExpectStatus:   "2xx",
	}
}

// SourceOf names where a flag's value came from.
func (in *Input) SourceOf(flag string) string {
	if s := in.Sources[flag]; s != "" {
		return s
	}
	return "--" + flag
}

// bad is an input error about flag. When value is shown, it is quoted after
// the source, the way a user would have typed it (NAME="v" for variables).
func (in *Input) bad(flag string, value *string, format string, args ...any) error {
	src := in.SourceOf(flag)
	if value != nil {
		src = source.Quote(src, *value)
	}
	return &Error{Source: src, Err: fmt.Errorf(format, args...)}
}

func ptr(s string) *string { return &s }

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f })
}
