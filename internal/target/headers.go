package target

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// headersInto reads -H values (and @FILE lists) into the request header,
// registering secret values with the redactor.
func (in *Input) headersInto(o *scheme.Options, red *redact.Redactor) error {
	// Each line keeps where it came from: a bad line of -H @FILE is named
	// by the file and its line, not only by the flag.
	type line struct{ text, src string }
	var lines []line
	for _, h := range in.Headers {
		name, ok := strings.CutPrefix(h, "@")
		if !ok {
			lines = append(lines, line{h, in.SourceOf("header")})
			continue
		}
		b, err := readInput(name, inputfile.Headers)
		if err != nil {
			return in.bad("header", ptr(h), "%v", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for n := 1; sc.Scan(); n++ {
			if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, line{l, fmt.Sprintf("%s %s:%d", in.SourceOf("header"), h, n)})
			}
		}
	}
	for _, ln := range lines {
		name, val, err := parseHeader(ln.text)
		if err != nil {
			return &Error{Source: ln.src, Err: err}
		}
		if red.IsSecretHeader(name) {
			red.AddSecret(val)
			if _, cred, ok := strings.Cut(val, " "); ok {
				red.AddSecret(strings.TrimSpace(cred))
			}
		}
		if err := checkHost(name, val); err != nil {
			return &Error{Source: ln.src, Err: err}
		}
		addHeader(o, name, val)
	}
	return nil
}

// parseHeader reads one -H line, 'Name: value', into its name and value.
func parseHeader(l string) (name, val string, err error) {
	name, val, ok := strings.Cut(l, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || !ValidToken(name) {
		// Never echo the line: it may be "Authorization Bearer x".
		return "", "", errors.New("want 'Name: value', got a header without a colon or with a bad name")
	}
	val = strings.TrimSpace(val)
	if hasControl(val) {
		return "", "", fmt.Errorf("%s: the value has a control character (a newline?)", name)
	}
	return name, val, nil
}

// checkHost refuses a Host line whose value is not a host. It runs after a
// secret header's value is registered (--secret-header Host), since the
// error quotes the value.
func checkHost(name, val string) error {
	if strings.EqualFold(name, "Host") && (!httpguts.ValidHostHeader(val) || val == "") {
		return fmt.Errorf("Host: %q is not a valid host", val)
	}
	return nil
}

// addHeader puts a parsed -H line into the request: Host sets the host,
// 'Name:' sends the header empty (removing Go's own).
func addHeader(o *scheme.Options, name, val string) {
	if strings.EqualFold(name, "Host") {
		o.Host = val
		return
	}
	ck := http.CanonicalHeaderKey(name)
	if val == "" {
		o.Header[ck] = []string{""}
		return
	}
	o.Header.Add(ck, val)
}

// Headers are one target's own request headers (-H lines, a targets-file
// entry's headers:) kept as data beside a template that many targets
// share, instead of a template of their own: a fleet whose entries each
// send a header no other does (a Host per virtual host behind one
// ingress, a token each) would otherwise build and keep a template (its
// redactor, TLS configuration, header map: ~1.7 KiB) a target. Each
// probe's options get a header map of their own built from the lines.
type Headers struct {
	lines []string
	// secret: a line is a secret header's (Authorization, Cookie,
	// --secret-header), whose value the target's own redactor holds.
	secret bool
}

// OwnHeaders returns lines as Headers for targets built on t, the lines in
// place of t's header list, as an entry's headers: replace -H. ok is false
// when they cannot ride on a shared template and the target needs one of
// its own (whose Build then says what is wrong, naming the line): t has
// header lines or a body of its own (the body's default Content-Type
// depends on the lines), a line reads a file (@FILE) or is not a valid
// header. A secret header's value is registered with the target's own
// redactor (Secrets), never with the shared one: thousands of secrets in
// a shared one would scrub every target's output of every other's.
func (t *Template) OwnHeaders(lines []string) (h Headers, ok bool) {
	if len(t.in.Headers) > 0 || t.opts.Body != nil {
		return Headers{}, false
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "@") {
			return Headers{}, false
		}
		name, val, err := parseHeader(l)
		if err != nil || checkHost(name, val) != nil {
			return Headers{}, false
		}
		h.secret = h.secret || t.opts.Redactor.IsSecretHeader(name)
	}
	h.lines = lines
	return h, true
}

// Secrets is the redactor of a target built on t with URL u and headers h
// when they carry secrets of their own (u's userinfo or a secret query or
// fragment parameter, by name; a secret header's value): a clone of t's
// with them registered, a hundred bytes and the secrets, so that a query
// string or a token of a target's own needs no template of its own. Nil
// when they carry none: the target's probes share t's redactor.
func (t *Template) Secrets(u *url.URL, h Headers) *redact.Redactor {
	if !h.secret && !t.opts.Redactor.Holds(u) {
		return nil
	}
	r := t.opts.Redactor.Clone()
	r.AddURL(u)
	for _, l := range h.lines {
		if name, val, _ := parseHeader(l); r.IsSecretHeader(name) {
			r.AddSecret(val)
			if _, cred, ok := strings.Cut(val, " "); ok {
				r.AddSecret(strings.TrimSpace(cred))
			}
		}
	}
	return r
}
