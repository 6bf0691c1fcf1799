// Package target builds a probe's options from what a user typed: flags,
// environment variables, the config file, or an entry of watch's targets
// file. Every caller gets the same validation, and every error names where
// the bad value came from (`--resolve`, `HEALTHCTL_RESOLVE`,
// `config healthctl.yaml: probe.resolve`, `targets.yaml:12: target "api"`).
//
// Errors are *Error; only cmd/healthctl turns them into exit code 2.
package target

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/healthctl/healthctl/internal/source"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/net/http/httpguts"

	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/proxyenv"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
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

// Template is an Input once validated and its files read: everything but the
// URL.
type Template struct {
	opts scheme.Options
	in   *Input
}

// Options returns a copy of the template's options without a URL.
func (t *Template) Options() scheme.Options { return t.opts }

// Build validates the input and reads its files (CA, client certificate,
// -H @file, --data @file), so bad input is found before anything is probed.
// getenv reads the proxy variables.
func (in *Input) Build(getenv func(string) string) (*Template, error) {
	o := scheme.Options{
		Header:         http.Header{},
		UserAgent:      in.UserAgent,
		Network:        "tcp",
		Resolve:        map[string][]string{},
		Follow:         in.Follow,
		ConnectTimeout: in.ConnectTimeout,
		ReadTimeout:    in.ReadTimeout,
		MaxTime:        in.MaxTime,
		MaxBody:        in.MaxBody,
	}
	red := redact.NewRedactor(in.SecretHeader, in.SecretParam)
	o.Redactor = red

	switch {
	case in.IPv4 && in.IPv6:
		e := &Error{Err: errors.New("-4 and -6 contradict each other")}
		if a, b := in.SourceOf("ipv4"), in.SourceOf("ipv6"); a != "--ipv4" || b != "--ipv6" {
			e.Source = a + " and " + b
		}
		return nil, e
	case in.IPv4:
		o.Network = "tcp4"
	case in.IPv6:
		o.Network = "tcp6"
	}
	o.AllAddresses = in.AllAddresses
	o.HTTP2PriorKnowledge = in.HTTP2Prior
	if hasControl(in.GRPCService) {
		return nil, in.bad("grpc-service", nil, "the value has a control character (a newline?)")
	}
	o.GRPCService = in.GRPCService
	if in.ConnectTimeout <= 0 {
		return nil, in.bad("connect-timeout", ptr(in.ConnectTimeout.String()), "must be positive")
	}
	if in.ReadTimeout <= 0 {
		return nil, in.bad("read-timeout", ptr(in.ReadTimeout.String()), "must be positive")
	}
	if in.MaxTime < 0 {
		return nil, in.bad("max-time", ptr(in.MaxTime.String()), "must not be negative (0: connect + read timeout)")
	}
	if o.MaxTime == 0 {
		o.MaxTime = in.ConnectTimeout + in.ReadTimeout
	}
	if in.Follow < 0 {
		return nil, in.bad("follow", ptr(strconv.Itoa(in.Follow)), "want a number of redirects >= 0")
	}
	if in.MaxBody < 0 || in.MaxBody > MaxSize {
		return nil, in.bad("max-body", ptr(strconv.FormatInt(in.MaxBody, 10)), "want a size from 0 to %s", FormatSize(MaxSize))
	}
	if in.UserAgent != "" && hasControl(in.UserAgent) {
		return nil, in.bad("user-agent", nil, "the value has a control character (a newline?)")
	}

	if err := in.headersInto(&o, red); err != nil {
		return nil, err
	}
	if in.User != "" {
		u, pw, ok := strings.Cut(in.User, ":")
		if !ok {
			return nil, in.bad("user", nil, "want user:password")
		}
		if hasControl(in.User) {
			return nil, in.bad("user", nil, "the value has a control character (a newline?)")
		}
		o.User, o.Password, o.HasUser = u, pw, true
		red.AddBasic(u, pw) // the password, and the Basic value sent
	}
	if in.Data != "" {
		body := []byte(in.Data)
		if name, ok := strings.CutPrefix(in.Data, "@"); ok && name == "-" {
			// curl's @-: the body is standard input, read once, up to
			// MaxSize (a body that big is a mistake, not a request).
			if in.Stdin == nil {
				return nil, in.bad("data", ptr(in.Data), "no standard input to read here")
			}
			var err error
			if body, err = io.ReadAll(io.LimitReader(in.Stdin, maxDataBody+1)); err != nil {
				return nil, in.bad("data", ptr(in.Data), "reading standard input: %v", err)
			}
			if int64(len(body)) > maxDataBody {
				return nil, in.bad("data", ptr(in.Data), "standard input is longer than the %s cap of a request body", inputfile.Size(maxDataBody))
			}
		} else if ok {
			// The file is checked now (there, a regular file, readable)
			// and streamed from for each request, never read whole.
			size, err := statInput(name, inputfile.Body)
			if errors.Is(err, inputfile.ErrNotRegular) {
				// A FIFO or a device (/dev/zero, endless) has no
				// size to send as the Content-Length, and may block
				// or never end: exit 2, saying what a stream takes.
				return nil, in.bad("data", ptr(in.Data), "%v (it is streamed with its size as the Content-Length; a stream goes through standard input, -d @-)", err)
			}
			if err != nil {
				return nil, in.bad("data", ptr(in.Data), "%v", err)
			}
			o.BodyFile, o.BodySize, body = name, size, []byte{}
		}
		o.Body = body
		if o.Header.Get("Content-Type") == "" {
			o.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	o.Method = strings.ToUpper(in.Method)
	if o.Method == "" {
		o.Method = http.MethodGet
		if o.Body != nil {
			o.Method = http.MethodPost
		}
	}
	if !ValidToken(o.Method) {
		return nil, in.bad("method", ptr(in.Method), "not an HTTP method")
	}

	for _, r := range in.Resolve {
		key, addrs, err := ParseResolve(r)
		if err != nil {
			return nil, in.bad("resolve", ptr(r), "%v", err)
		}
		if fam := familyOf(o.Network); fam != 0 {
			kept := slices.DeleteFunc(slices.Clone(addrs), func(a string) bool {
				return (netip.MustParseAddr(a).Is4()) != (fam == 4)
			})
			if len(kept) == 0 {
				flag := map[int]string{4: "ipv4", 6: "ipv6"}[fam]
				return nil, in.bad("resolve", ptr(r), "has no IPv%d address, but %s asks for IPv%d only", fam, in.SourceOf(flag), fam)
			}
		}
		o.Resolve[key] = addrs
	}
	if in.DNSServer != "" {
		srv, err := HostPortDefault(in.DNSServer, "53")
		if err != nil {
			return nil, in.bad("dns-server", ptr(in.DNSServer), "%v", err)
		}
		o.DNSServer = srv
	}

	tc, err := in.tlsConfig()
	if err != nil {
		return nil, err
	}
	o.TLSConfig = tc
	if in.Insecure {
		o.InsecureWhy = in.SourceOf("insecure")
	}
	o.ProxyTLSConfig = &tls.Config{InsecureSkipVerify: in.ProxyInsecure}
	if in.ProxyCACert != "" {
		pem, err := readInput(in.ProxyCACert, inputfile.CABundle)
		if err != nil {
			return nil, in.bad("proxy-cacert", ptr(in.ProxyCACert), "%v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, in.bad("proxy-cacert", ptr(in.ProxyCACert), "no PEM certificate in it")
		}
		o.ProxyTLSConfig.RootCAs = pool
	}

	for _, name := range []string{"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"} {
		if v := getenv(name); v != "" {
			if err := proxyenv.Check(v); err != nil {
				return nil, &Error{Source: name, Err: err}
			}
		}
	}
	o.Proxy = proxyenv.FromEnv(getenv, in.NoProxy)

	if o.Expect.Status, err = expect.ParseStatusSet(in.ExpectStatus); err != nil {
		return nil, in.bad("expect-status", ptr(in.ExpectStatus), "%v", err)
	}
	o.Expect.BodyText = in.ExpectBody
	for _, s := range in.ExpectBodyRegex {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, in.bad("expect-body-regex", ptr(s), "%v", err)
		}
		o.Expect.BodyRegex = append(o.Expect.BodyRegex, re)
	}
	for _, f := range []struct {
		flag string
		in   []string
		out  *[]*regexp.Regexp
	}{{"expect-body-not", in.ExpectBodyNot, &o.Expect.BodyNotRegex}, {"degraded-if-body", in.DegradedIfBody, &o.Expect.DegradedBody}} {
		for _, s := range f.in {
			re, err := regexp.Compile(s)
			if err != nil {
				return nil, in.bad(f.flag, ptr(s), "%v", err)
			}
			*f.out = append(*f.out, re)
		}
	}
	for _, f := range []struct {
		flag string
		in   []string
		out  *[]expect.JSONExpect
	}{{"expect-json", in.ExpectJSON, &o.Expect.JSON}, {"degraded-if-json", in.DegradedIfJSON, &o.Expect.DegradedJSON}} {
		for _, s := range f.in {
			j, err := expect.ParseJSON(s)
			if err != nil {
				return nil, in.bad(f.flag, ptr(s), "%v", err)
			}
			*f.out = append(*f.out, j)
		}
	}
	for _, f := range []struct {
		flag string
		in   []string
		out  *[]expect.HeaderExpect
	}{{"expect-header", in.ExpectHeader, &o.Expect.HeaderRE}, {"expect-header-not", in.ExpectHeaderNot, &o.Expect.HeaderNotRE}} {
		for _, s := range f.in {
			name, expr, ok := strings.Cut(s, "=")
			if !ok || name == "" {
				return nil, in.bad(f.flag, ptr(s), "want NAME=RE")
			}
			re, err := regexp.Compile(expr)
			if err != nil {
				return nil, in.bad(f.flag, ptr(s), "%v", err)
			}
			*f.out = append(*f.out, expect.HeaderExpect{Name: name, RE: re})
		}
	}
	if o.Dialogue, err = ParseDialogue(in.Dialogue); err != nil {
		return nil, in.bad("dialogue", nil, "%v", err)
	}
	return &Template{opts: o, in: in}, nil
}

// ParseDialogue reads --dialogue's steps, in order: expect:RE, send:TEXT
// (one line; after an expect: it is that step's send, expanded from its
// match as blackbox's query_response does), starttls.
func ParseDialogue(steps []string) ([]scheme.Step, error) {
	var out []scheme.Step
	for _, s := range steps {
		kind, arg, _ := strings.Cut(s, ":")
		switch kind {
		case "expect":
			re, err := regexp.Compile(arg)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", strconv.Quote(s), err)
			}
			out = append(out, scheme.Step{Expect: re})
		case "send":
			if hasControl(arg) {
				return nil, fmt.Errorf("%s: one line, without control characters (the newline is added)", strconv.Quote(s))
			}
			if n := len(out); n > 0 && out[n-1].Expect != nil && out[n-1].Send == "" && !out[n-1].StartTLS {
				out[n-1].Send = arg
			} else {
				out = append(out, scheme.Step{Send: arg})
			}
		case "starttls":
			if arg != "" {
				return nil, fmt.Errorf("%s: starttls takes no value", strconv.Quote(s))
			}
			if n := len(out); n > 0 && !out[n-1].StartTLS {
				out[n-1].StartTLS = true
			} else {
				out = append(out, scheme.Step{StartTLS: true})
			}
		default:
			return nil, fmt.Errorf("%s: want expect:RE, send:TEXT or starttls", strconv.Quote(s))
		}
	}
	return out, nil
}

// pathErr drops the "open" verb Go puts before a file error.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f })
}

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

func (in *Input) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{InsecureSkipVerify: in.Insecure, ServerName: in.ServerName}
	if in.CACert != "" {
		pem, err := readInput(in.CACert, inputfile.CABundle)
		if err != nil {
			return nil, in.bad("cacert", ptr(in.CACert), "%v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, in.bad("cacert", ptr(in.CACert), "no PEM certificate in it")
		}
		tc.RootCAs = pool
	}
	switch {
	case in.Cert != "" && in.Key == "":
		return nil, in.bad("cert", nil, "no --key (--cert and --key go together)")
	case in.Cert == "" && in.Key != "":
		return nil, in.bad("key", nil, "no --cert (--cert and --key go together)")
	case in.Cert != "":
		// As tls.LoadX509KeyPair, through the same bounded reads.
		certPEM, err := readInput(in.Cert, inputfile.ClientCert)
		if err != nil {
			return nil, in.bad("cert", ptr(in.Cert), "%v", err)
		}
		keyPEM, err := readInput(in.Key, inputfile.ClientCert)
		if err != nil {
			return nil, in.bad("key", ptr(in.Key), "%v", err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, &Error{Source: in.SourceOf("cert") + "/" + in.SourceOf("key"), Err: err}
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// notFor refuses an option the URL's protocol does not use (its row of
// the scheme table says which apply): a condition on an HTTP answer that a
// connect or a gRPC health call never gets would otherwise pass unchecked,
// and a request option would be silently dropped. source names the URL (an
// argument, a targets file's line).
func (in *Input) notFor(name, source string) error {
	row, ok := scheme.LookupScheme(name)
	if !ok {
		return nil
	}
	type opt struct {
		flag string
		set  bool
		// needs is the option group the option belongs to.
		needs scheme.Applies
	}
	opts := []opt{
		{"expect-status", in.ExpectStatus != "" && in.ExpectStatus != "2xx", scheme.AppliesAnswer},
		{"expect-body", len(in.ExpectBody) > 0, scheme.AppliesAnswer},
		{"expect-body-regex", len(in.ExpectBodyRegex) > 0, scheme.AppliesAnswer},
		{"expect-json", len(in.ExpectJSON) > 0, scheme.AppliesAnswer},
		{"expect-header", len(in.ExpectHeader) > 0, scheme.AppliesAnswer},
		{"expect-body-not", len(in.ExpectBodyNot) > 0, scheme.AppliesAnswer},
		{"expect-header-not", len(in.ExpectHeaderNot) > 0, scheme.AppliesAnswer},
		{"degraded-if-body", len(in.DegradedIfBody) > 0, scheme.AppliesAnswer},
		{"degraded-if-json", len(in.DegradedIfJSON) > 0, scheme.AppliesAnswer},
		{"method", in.Method != "", scheme.AppliesRequest},
		{"data", in.Data != "", scheme.AppliesRequest},
		{"user", in.User != "", scheme.AppliesRequest},
		{"follow", in.Follow != 0, scheme.AppliesRequest},
		{"http2-prior-knowledge", in.HTTP2Prior, scheme.AppliesRequest},
		{"header", len(in.Headers) > 0, scheme.AppliesHeader},
		{"grpc-service", in.GRPCService != "", scheme.AppliesGRPCService},
		{"dialogue", len(in.Dialogue) > 0, scheme.AppliesDialogue},
		// --max-body bounds the body read; no other protocol reads one.
		{"max-body", in.MaxBody != scheme.DefaultMaxBody, scheme.AppliesAnswer},
	}
	for _, o := range opts {
		if !o.set || row.Options&o.needs != 0 {
			continue
		}
		consequence := "it would be ignored"
		if o.needs == scheme.AppliesAnswer && o.flag != "max-body" {
			consequence = "the condition would never be checked"
		}
		var value *string
		what := row.Words.Does
		if what == "" {
			what = "is " + row.Name + "://"
		}
		if o.needs == scheme.AppliesGRPCService {
			value = ptr(in.GRPCService)
		}
		return in.bad(o.flag, value, "is for %s, but %s %s: %s", urlsWith(o.needs), source, what, consequence)
	}
	return nil
}

// urlsWith names the URLs whose protocols take an option group:
// "http:// and https:// URLs".
func urlsWith(a scheme.Applies) string {
	var names []string
	for _, s := range scheme.Schemes() {
		if s.Options&a != 0 {
			names = append(names, s.Name+"://")
		}
	}
	list := strings.Join(names, ", ")
	if i := strings.LastIndex(list, ", "); i >= 0 {
		list = list[:i] + " and " + list[i+2:]
	}
	return list + " URLs"
}

// ForURL returns the options for one URL given on the command line; its
// errors name the argument (redacted: a password in it is not printed), so
// "probe http://ok /x" says which of the two has no host.
func (t *Template) ForURL(raw string) (*scheme.Options, error) {
	return t.ForURLFrom(raw, "URL argument "+strconv.Quote(t.opts.Redactor.RawURL(raw)))
}

// CheckURL is ForURLFrom's validation alone: raw parsed and checked against
// the template's options, the options not built (a sweep's targets are
// checked when the file is read, and built again when probed).
func (t *Template) CheckURL(raw, source string) (*url.URL, error) {
	u, err := ParseURL(raw)
	if err != nil {
		return nil, &Error{Source: source, Err: err}
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		switch {
		case t.opts.Network == "tcp4" && !ip.Unmap().Is4():
			return nil, &Error{Source: source, Err: fmt.Errorf("%s is an IPv6 address, but %s asks for IPv4 only", u.Hostname(), t.in.SourceOf("ipv4"))}
		case t.opts.Network == "tcp6" && ip.Is4():
			return nil, &Error{Source: source, Err: fmt.Errorf("%s is an IPv4 address, but %s asks for IPv6 only", u.Hostname(), t.in.SourceOf("ipv6"))}
		}
	}
	if err := t.in.notFor(u.Scheme, source); err != nil {
		return nil, err
	}
	return u, nil
}

// Redactor is the redactor every probe of the template shares.
func (t *Template) Redactor() *redact.Redactor { return t.opts.Redactor }

// ForURLFrom returns the options for one URL, validated; source names where
// the URL came from in errors (a file and line, an argument).
func (t *Template) ForURLFrom(raw, source string) (*scheme.Options, error) {
	u, err := t.CheckURL(raw, source)
	if err != nil {
		return nil, err
	}
	return t.ForCheckedURL(u), nil
}

// ForURLAlone is ForURLFrom with a redactor of the options' own, a clone
// of the template's: the URL's secrets are registered there and not in
// the template's, which every probe of it shares (watch --listen's /probe:
// no request's secrets are remembered for another's answers).
func (t *Template) ForURLAlone(raw, source string) (*scheme.Options, error) {
	u, err := t.CheckURL(raw, source)
	if err != nil {
		return nil, err
	}
	c := *t
	c.opts.Redactor = t.opts.Redactor.Clone()
	return c.ForCheckedURL(u), nil
}

// ForCheckedURL is ForURLFrom for a URL that CheckURL has passed: the
// options take u as their own (nothing may change it from now on).
func (t *Template) ForCheckedURL(u *url.URL) *scheme.Options {
	return t.ForCheckedURLWith(u, Headers{}, nil)
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

// ForCheckedURLWith is ForCheckedURL with a target's own headers (from
// OwnHeaders on t) in place of the template's, and its own redactor (from
// Secrets; nil: the template's).
func (t *Template) ForCheckedURLWith(u *url.URL, h Headers, r *redact.Redactor) *scheme.Options {
	o := t.opts
	if r != nil {
		o.Redactor = r
	}
	if h.lines != nil {
		o.Header = make(http.Header, len(h.lines))
		for _, l := range h.lines {
			name, val, _ := parseHeader(l) // checked by OwnHeaders
			addHeader(&o, name, val)
		}
	}
	o.URL = u
	o.Redactor.AddURL(u)
	if row, _ := scheme.LookupScheme(u.Scheme); row.TLS && o.TLSConfig.ServerName == "" && o.Host != "" {
		tc := o.TLSConfig.Clone()
		tc.ServerName = hostOnly(o.Host)
		o.TLSConfig = tc
	}
	return &o
}

// isNumber reports whether strconv.Atoi takes s (an optional sign, then
// decimal digits, in range), without the error Atoi allocates for every
// URL that is not a number.
func isNumber(s string) bool {
	d := s
	if d != "" && (d[0] == '+' || d[0] == '-') {
		d = d[1:]
	}
	if d == "" {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	_, err := strconv.Atoi(s)
	return err == nil
}

// ParseURL accepts what curl accepts for health URLs: http and https, with
// "http://" assumed when no scheme is given.
func ParseURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("empty URL")
	}
	if isNumber(raw) {
		// "--follow 3 URL" parses 3 as a URL: --follow's value is optional.
		return nil, fmt.Errorf("%q is not a URL (for a number of redirects write --follow=%s)", raw, raw)
	}
	s := raw
	if !strings.Contains(s, "://") {
		s = scheme.DefaultScheme().URL(s)
	}
	u, err := url.Parse(s)
	if err != nil {
		msg := err.Error()
		var ue *url.Error
		if errors.As(err, &ue) {
			msg = ue.Err.Error()
		}
		if scheme, rest, ok := strings.Cut(s, "://"); ok && strings.HasPrefix(strings.ToLower(rest[strings.Index(rest, "@")+1:]), "%2f") {
			// libpq's percent-encoded socket directory as the host,
			// which Go's URL parser refuses.
			return nil, fmt.Errorf("malformed URL: %s (a Unix socket's directory goes in the host parameter: %s:///DB?host=/DIR)", msg, scheme)
		}
		return nil, fmt.Errorf("malformed URL: %s", msg)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	row, ok := scheme.LookupScheme(u.Scheme)
	if !ok {
		return nil, fmt.Errorf("unsupported scheme %q (want %s); to check only that its port accepts connections, probe %s", u.Scheme, scheme.SchemeList(false, nil), tcpSuggestion(u))
	}
	if err := checkFieldBytes(u); err != nil {
		return nil, err
	}
	sock := scheme.SocketPath(u)
	if u.Hostname() == "" && sock == "" {
		if err := checkForm(u, row); err != nil {
			// What the row's form says is wrong (a host parameter
			// that is no socket directory).
			return nil, err
		}
		return nil, fmt.Errorf("URL has no host")
	}
	if sock != "" {
		// A Unix socket: its row's own check holds the URL's form.
	} else if row.MultiHost && strings.Contains(u.Host, ",") {
		if err := checkHosts(u); err != nil {
			return nil, err
		}
	} else if err := checkHostName(u); err != nil {
		return nil, err
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("URL port %q out of range", p)
		}
	}
	if err := checkForm(u, row); err != nil {
		return nil, err
	}
	return u, nil
}

// tcpSuggestion is the connect-only URL that checks the port of u, a URL of a
// scheme healthctl does not speak: its host and port when it names one
// host, HOST:PORT where it does not say.
func tcpSuggestion(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	if host == "" || strings.ContainsAny(u.Host, ",") || !validHostName(host) {
		host = "HOST"
	}
	if port == "" || strings.ContainsAny(u.Host, ",") {
		port = "PORT"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme.ConnectScheme().URL(host + ":" + port)
}

// badFieldBytes are the bytes no URL field may hold once decoded: NUL ends
// a field of a PostgreSQL startup message (and starts a parameter of the
// URL's choosing), CR and LF end a Redis command or a header line.
const badFieldBytes = "\x00\r\n"

// checkFieldBytes refuses NUL, CR and LF, literal or percent-encoded, in
// every decoded field of a URL: its user name and password for every
// kind, and its path, query and fragment for every kind but HTTP's (the
// rows that send a request), whose request target carries them
// percent-encoded as they were written.
func checkFieldBytes(u *url.URL) error {
	fields := []struct{ name, value string }{}
	if u.User != nil {
		pw, _ := u.User.Password()
		fields = append(fields, struct{ name, value string }{"user name", u.User.Username()}, struct{ name, value string }{"password", pw})
	}
	if row, _ := scheme.LookupScheme(u.Scheme); row.Options&scheme.AppliesRequest == 0 {
		fields = append(fields, struct{ name, value string }{"path", u.Path}, struct{ name, value string }{"fragment", u.Fragment})
		for kv := range strings.SplitSeq(u.RawQuery, "&") {
			k, v, _ := strings.Cut(kv, "=")
			uk, err1 := url.QueryUnescape(k)
			uv, err2 := url.QueryUnescape(v)
			if err1 != nil || err2 != nil {
				uk, uv = k, v
			}
			fields = append(fields, struct{ name, value string }{"query parameter " + strconv.Quote(uk), uk + uv})
		}
	}
	for _, f := range fields {
		if i := strings.IndexAny(f.value, badFieldBytes); i >= 0 {
			return fmt.Errorf("URL's %s holds a %s byte (%%%02X), which no URL field may hold", f.name, byteName(f.value[i]), f.value[i])
		}
	}
	return nil
}

func byteName(b byte) string {
	switch b {
	case 0:
		return "NUL"
	case '\r':
		return "CR"
	}
	return "LF"
}

// checkHostName refuses a host that is not one host's name or address
// before anything can resolve it: two hosts (libpq's h1:p1,h2:p2, read by
// Go's parser as one name with a comma), or any other byte a DNS name
// cannot have.
func checkHostName(u *url.URL) error {
	h := u.Hostname()
	switch {
	case strings.Contains(u.Host, ","):
		return fmt.Errorf("URL names more than one host (%q): give each host a URL of its own", u.Host)
	case !validHostName(h):
		return fmt.Errorf("URL's host %q is not a host name or an IP address", h)
	}
	return nil
}

// checkHosts checks each host of a URL that may name several
// (postgres://h1:5432,h2:5432/db, as libpq reads it): each a host name or
// an address, with a port in range when it names one.
func checkHosts(u *url.URL) error {
	for hp := range strings.SplitSeq(u.Host, ",") {
		h := &url.URL{Host: hp}
		switch p := h.Port(); {
		case h.Hostname() == "":
			return fmt.Errorf("URL's hosts %q: one is empty", u.Host)
		case !validHostName(h.Hostname()):
			return fmt.Errorf("URL's host %q is not a host name or an IP address", h.Hostname())
		case p != "" && !validPort(p):
			return fmt.Errorf("URL port %q out of range", p)
		}
	}
	return nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// validHostName says h is an IP address or a name of letters, digits,
// dots, hyphens and underscores (a container's name may hold one), or
// non-ASCII letters (an internationalised name).
func validHostName(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
		case r >= 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)):
		default:
			return false
		}
	}
	return h != ""
}

// checkForm holds a URL to what its protocol's row says it can mean: a
// protocol with a form of its own (a gRPC health call, a connect) takes
// host and port (no default port), for gRPC a service name as the path, and
// nothing else — no credentials, query or fragment, which no health call
// would send. HTTP's URLs are any.
func checkForm(u *url.URL, row scheme.Scheme) error {
	if err, ok := row.CheckURL(u); ok {
		// The protocol's own rules (its exchange file's).
		return err
	}
	if row.Form == "" {
		return nil
	}
	switch {
	case u.Port() == "" && row.DefaultPort == "":
		return fmt.Errorf("%s URL has no port (want %s)", u.Scheme, row.Form)
	case u.User != nil:
		return fmt.Errorf("%s URL has credentials, which it cannot send (want %s)", u.Scheme, row.Form)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Errorf("%s URL has a query or fragment (want %s)", u.Scheme, row.Form)
	case row.Path == scheme.PathNone && u.Path != "" && u.Path != "/":
		return fmt.Errorf("%s URL has a path (want %s)", u.Scheme, row.Form)
	case hasControl(u.Path):
		return fmt.Errorf("%s URL's service name has a control character", u.Scheme)
	}
	return nil
}

func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

// maxDataBody is the most --data @- reads from standard input, as
// inputfile.Data bounds --data @file.
const maxDataBody = 64 << 20

// readInput reads an input file through inputfile (a regular file within
// its kind's cap: a FIFO or /dev/zero is refused at once), its error
// without the path, which the caller names with its flag.
func readInput(name string, k inputfile.Kind) ([]byte, error) {
	b, err := inputfile.Read(name, k)
	var ie *inputfile.Error
	if errors.As(err, &ie) {
		return nil, ie.Err
	}
	if err != nil {
		return nil, pathErr(err)
	}
	return b, nil
}

// statInput opens an input file streamed later (inputfile.Open: a regular
// file, readable, without blocking) and says its size, its error without
// the path, which the caller names with its flag.
func statInput(name string, k inputfile.Kind) (int64, error) {
	f, fi, err := inputfile.Open(name, k)
	var ie *inputfile.Error
	if errors.As(err, &ie) {
		return 0, ie.Err
	}
	if err != nil {
		return 0, pathErr(err)
	}
	f.Close()
	return fi.Size(), nil
}

// ParseResolve reads curl's --resolve HOST:PORT:ADDR[,ADDR...] (an ADDR
// may be [v6]) into the key "host:port" and the addresses, in order.
func ParseResolve(s string) (key string, addrs []string, err error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || parts[0] == "" {
		return "", nil, fmt.Errorf("want HOST:PORT:ADDR[,ADDR...]")
	}
	// A host no URL can have (" app", "a/b": FuzzSizeTimeResolve) would
	// silently never apply.
	if u, err := url.Parse("//" + parts[0] + "/"); err != nil || u.Host != parts[0] || strings.ContainsAny(parts[0], " \t@") {
		return "", nil, fmt.Errorf("%q is not a host name", parts[0])
	}
	if n, err := strconv.Atoi(parts[1]); err != nil || n < 1 || n > 65535 {
		return "", nil, fmt.Errorf("bad port %q", parts[1])
	}
	for _, a := range strings.Split(parts[2], ",") {
		ip, err := netip.ParseAddr(strings.Trim(strings.TrimSpace(a), "[]"))
		if err != nil {
			return "", nil, fmt.Errorf("%q is not an IP address", a)
		}
		if s := ip.Unmap().String(); !slices.Contains(addrs, s) {
			addrs = append(addrs, s)
		}
	}
	return strings.ToLower(parts[0]) + ":" + parts[1], addrs, nil
}

// familyOf is 4 for "tcp4", 6 for "tcp6", 0 for either.
func familyOf(network string) int {
	switch network {
	case "tcp4":
		return 4
	case "tcp6":
		return 6
	}
	return 0
}

// HostPortDefault reads ADDR[:PORT] with an IP address, adding port when
// none is given.
func HostPortDefault(s, port string) (string, error) {
	if ip, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return net.JoinHostPort(ip.String(), port), nil
	}
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("want ADDR[:PORT]")
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return "", fmt.Errorf("%q is not an IP address", h)
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("bad port %q", p)
	}
	return net.JoinHostPort(ip.String(), p), nil
}

// MaxSize is the largest size ParseSize accepts (1 TiB): far past any body a
// health endpoint sends, and far from int64 overflow.
const MaxSize = int64(1) << 40

var sizeUnits = []struct {
	suffix string
	m      int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000}, {"tb", 1000 * 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"b", 1},
}

// ParseSize reads 65536, 64KiB, 64k, 1MiB, 1m, 1GiB (binary units for k, m,
// g, t; kB, MB, GB, TB are decimal), from 0 to MaxSize.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a size like 65536, 64KiB or 1MiB")
	}
	if n > math.MaxInt64/mult || n*mult > MaxSize {
		return 0, fmt.Errorf("too large: at most %s", FormatSize(MaxSize))
	}
	return n * mult, nil
}

// FormatSize prints a size the way ParseSize reads it back: 64KiB, 1TiB.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// ValidToken reports whether s is an HTTP token (method or header name).
func ValidToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) {
			return false
		}
	}
	return true
}

// ParseTime reads RFC 3339 or unix seconds, in years 1 to 9999: a time JSON
// can write (FuzzSizeTimeResolve found unix milliseconds read as seconds,
// year 57884, which no state file could then hold).
func ParseTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		t := time.Unix(n, 0)
		if y := t.Year(); y < 1 || y > 9999 {
			return time.Time{}, fmt.Errorf("unix seconds %d is the year %d (milliseconds?): want seconds", n, y)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("want RFC 3339 (2026-01-02T15:04:05Z) or unix seconds")
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("the year %d: want a year from 1 to 9999", y)
	}
	return t, nil
}
