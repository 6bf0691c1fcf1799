package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/net/http/httpguts"

	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
)

// probeFlags are the request, TLS, window and expectation flags shared by
// probe, wait-healthy and watch.
type probeFlags struct {
	headers         []string
	method          string
	data            string
	user            string
	userAgent       string
	ipv4, ipv6      bool
	insecure        bool
	cacert          string
	cert, key       string
	servername      string
	resolve         []string
	dnsServer       string
	follow          int
	noproxy         string
	connectTimeout  time.Duration
	readTimeout     time.Duration
	maxTime         time.Duration
	maxBody         sizeValue
	expectStatus    string
	expectBody      []string
	expectBodyRegex []string
	expectJSON      []string
	expectHeader    []string
	secretHeader    []string
	secretParam     []string
}

func (f *probeFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "request header 'Name: value' (repeatable); @FILE reads one per line; 'Host: x' sets the host; 'Name:' removes a default")
	fs.StringVar(&f.method, "method", "", "request method (default GET, or POST with --data)")
	fs.StringVar(&f.data, "data", "", "request body; @FILE reads it from a file")
	fs.StringVarP(&f.user, "user", "u", "", "basic auth 'user:password' (never printed)")
	fs.StringVar(&f.userAgent, "user-agent", "healthctl/"+versionString(), "User-Agent header")
	fs.BoolVarP(&f.ipv4, "ipv4", "4", false, "resolve and connect over IPv4 only")
	fs.BoolVarP(&f.ipv6, "ipv6", "6", false, "resolve and connect over IPv6 only")
	fs.BoolVar(&f.insecure, "insecure", false, "do not verify the server certificate (the chain is still shown)")
	fs.StringVar(&f.cacert, "cacert", "", "PEM file of CA certificates to trust instead of the system's")
	fs.StringVar(&f.cert, "cert", "", "PEM client certificate (with --key)")
	fs.StringVar(&f.key, "key", "", "PEM client key (with --cert)")
	fs.StringVar(&f.servername, "servername", "", "TLS server name (SNI and verification) instead of the URL's host")
	fs.StringArrayVar(&f.resolve, "resolve", nil, "HOST:PORT:ADDR: connect to ADDR for HOST:PORT, skipping DNS (repeatable)")
	fs.StringVar(&f.dnsServer, "dns-server", "", "ADDR[:PORT] of the only DNS server to ask")
	fs.IntVar(&f.follow, "follow", 0, "follow up to N redirects (--follow alone: 10); across hosts drops credentials")
	fs.Lookup("follow").NoOptDefVal = "10"
	fs.StringVar(&f.noproxy, "noproxy", "", "comma list of hosts to reach without a proxy ('*': none), instead of NO_PROXY")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", probe.DefaultConnectTimeout, "window for DNS + TCP connect + TLS handshake")
	fs.DurationVar(&f.readTimeout, "read-timeout", probe.DefaultReadTimeout, "window from the request written to the last body byte")
	fs.DurationVar(&f.maxTime, "max-time", 0, "cap on the whole probe (default connect + read timeout)")
	f.maxBody = sizeValue{text: "64KiB", n: probe.DefaultMaxBody}
	fs.Var(&f.maxBody, "max-body", "read the body up to this size, e.g. 65536, 64KiB, 1MiB (more is not a failure)")
	fs.StringVar(&f.expectStatus, "expect-status", "2xx", "expected status: codes, ranges, classes, comma lists (200, 200-399, 2xx)")
	fs.StringArrayVar(&f.expectBody, "expect-body", nil, "the body must contain TEXT (repeatable)")
	fs.StringArrayVar(&f.expectBodyRegex, "expect-body-regex", nil, "the body must match RE (repeatable)")
	fs.StringArrayVar(&f.expectJSON, "expect-json", nil, "PATH=VALUE: the JSON body at gjson PATH must equal VALUE (repeatable)")
	fs.StringArrayVar(&f.expectHeader, "expect-header", nil, "NAME=RE: a response header must match RE (repeatable)")
	fs.StringArrayVar(&f.secretHeader, "secret-header", nil, "also redact this request header's value (repeatable)")
	fs.StringArrayVar(&f.secretParam, "secret-param", nil, "also redact this query parameter's value (repeatable)")
}

// template is what a probeFlags set turns into once: everything but the URL.
// Building it reads the files (CA, cert, headers), so bad input is found
// before anything is probed.
type template struct {
	opts probe.Options
}

// build validates the flags and returns the shared options.
func (f *probeFlags) build(getenv env) (*template, error) {
	o := probe.Options{
		Header:         http.Header{},
		UserAgent:      f.userAgent,
		Network:        "tcp",
		Resolve:        map[string]string{},
		Follow:         f.follow,
		ConnectTimeout: f.connectTimeout,
		ReadTimeout:    f.readTimeout,
		MaxTime:        f.maxTime,
	}
	red := probe.NewRedactor(f.secretHeader, f.secretParam)
	o.Redactor = red

	switch {
	case f.ipv4 && f.ipv6:
		return nil, usageErrorf("-4 and -6 contradict each other")
	case f.ipv4:
		o.Network = "tcp4"
	case f.ipv6:
		o.Network = "tcp6"
	}
	if f.connectTimeout <= 0 || f.readTimeout <= 0 || f.maxTime < 0 {
		return nil, usageErrorf("--connect-timeout and --read-timeout must be positive, --max-time not negative")
	}
	if o.MaxTime == 0 {
		o.MaxTime = f.connectTimeout + f.readTimeout
	}
	if f.follow < 0 {
		return nil, usageErrorf("--follow %d: want a number of redirects >= 0", f.follow)
	}
	o.MaxBody = f.maxBody.n
	var err error

	if err := f.headersInto(&o, red); err != nil {
		return nil, usageError(err)
	}
	if f.user != "" {
		u, pw, ok := strings.Cut(f.user, ":")
		if !ok {
			return nil, usageErrorf("-u: want user:password")
		}
		o.User, o.Password, o.HasUser = u, pw, true
		red.AddSecret(pw)
	}
	if f.data != "" {
		body := []byte(f.data)
		if name, ok := strings.CutPrefix(f.data, "@"); ok {
			if body, err = os.ReadFile(name); err != nil {
				return nil, usageErrorf("--data @%s: %v", name, err)
			}
		}
		o.Body = body
		if o.Header.Get("Content-Type") == "" {
			o.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	o.Method = strings.ToUpper(f.method)
	if o.Method == "" {
		o.Method = http.MethodGet
		if o.Body != nil {
			o.Method = http.MethodPost
		}
	}
	if !validToken(o.Method) {
		return nil, usageErrorf("--method %q: not an HTTP method", f.method)
	}

	for _, r := range f.resolve {
		key, addr, err := parseResolve(r)
		if err != nil {
			return nil, usageError(err)
		}
		o.Resolve[key] = addr
	}
	if f.dnsServer != "" {
		srv, err := hostPortDefault(f.dnsServer, "53")
		if err != nil {
			return nil, usageErrorf("--dns-server %q: %v", f.dnsServer, err)
		}
		o.DNSServer = srv
	}

	tc, err := f.tlsConfig()
	if err != nil {
		return nil, usageError(err)
	}
	o.TLSConfig = tc

	for _, name := range []string{"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"} {
		if v := getenv(name); v != "" {
			if err := probe.ParseProxy(v); err != nil {
				return nil, usageErrorf("%s: %v", name, err)
			}
		}
	}
	o.Proxy = probe.EnvProxy(getenv, f.noproxy)

	if o.Expect.Status, err = probe.ParseStatusSet(f.expectStatus); err != nil {
		return nil, usageError(err)
	}
	o.Expect.BodyText = f.expectBody
	for _, s := range f.expectBodyRegex {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, usageErrorf("--expect-body-regex %q: %v", s, err)
		}
		o.Expect.BodyRegex = append(o.Expect.BodyRegex, re)
	}
	for _, s := range f.expectJSON {
		path, val, ok := strings.Cut(s, "=")
		if !ok || path == "" {
			return nil, usageErrorf("--expect-json %q: want PATH=VALUE", s)
		}
		o.Expect.JSON = append(o.Expect.JSON, probe.JSONExpect{Path: path, Value: val})
	}
	for _, s := range f.expectHeader {
		name, expr, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return nil, usageErrorf("--expect-header %q: want NAME=RE", s)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, usageErrorf("--expect-header %q: %v", s, err)
		}
		o.Expect.HeaderRE = append(o.Expect.HeaderRE, probe.HeaderExpect{Name: name, RE: re})
	}
	return &template{opts: o}, nil
}

// headersInto reads -H values (and @FILE lists) into the request header,
// registering secret values with the redactor.
func (f *probeFlags) headersInto(o *probe.Options, red *probe.Redactor) error {
	var lines []string
	for _, h := range f.headers {
		name, ok := strings.CutPrefix(h, "@")
		if !ok {
			lines = append(lines, h)
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("-H @%s: %v", name, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
	}
	for _, l := range lines {
		name, val, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || !validToken(name) {
			// Never echo the line: it may be "Authorization Bearer x".
			return fmt.Errorf("-H: want 'Name: value', got a header without a colon or with a bad name")
		}
		val = strings.TrimSpace(val)
		if strings.ContainsFunc(val, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) {
			return fmt.Errorf("-H %s: the value has a control character (a newline?)", name)
		}
		if red.IsSecretHeader(name) {
			red.AddSecret(val)
			if _, cred, ok := strings.Cut(val, " "); ok {
				red.AddSecret(strings.TrimSpace(cred))
			}
		}
		if strings.EqualFold(name, "Host") {
			if !httpguts.ValidHostHeader(val) || val == "" {
				return fmt.Errorf("-H Host: %q is not a valid host", val)
			}
			o.Host = val
			continue
		}
		ck := http.CanonicalHeaderKey(name)
		if val == "" {
			o.Header[ck] = []string{""}
			continue
		}
		o.Header.Add(ck, val)
	}
	return nil
}

func (f *probeFlags) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{InsecureSkipVerify: f.insecure, ServerName: f.servername}
	if f.cacert != "" {
		pem, err := os.ReadFile(f.cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %v", err)
		}
		pool, ok := probe.CertPool(pem)
		if !ok {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in it", f.cacert)
		}
		tc.RootCAs = pool
	}
	switch {
	case f.cert != "" && f.key == "", f.cert == "" && f.key != "":
		return nil, fmt.Errorf("--cert and --key go together")
	case f.cert != "":
		pair, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, fmt.Errorf("--cert/--key: %v", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// forURL returns the options for one URL argument, validated.
func (t *template) forURL(raw string) (*probe.Options, error) {
	u, err := parseURL(raw)
	if err != nil {
		return nil, usageError(err)
	}
	o := t.opts
	o.URL = u
	o.Redactor.AddURL(u)
	if u.Scheme == "https" && o.TLSConfig.ServerName == "" && o.Host != "" {
		tc := o.TLSConfig.Clone()
		tc.ServerName = hostOnly(o.Host)
		o.TLSConfig = tc
	}
	return &o, nil
}

// parseURL accepts what curl accepts for health URLs: http and https, with
// "http://" assumed when no scheme is given.
func parseURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("empty URL")
	}
	if _, err := strconv.Atoi(raw); err == nil {
		// "--follow 3 URL" parses 3 as a URL: --follow's value is optional.
		return nil, fmt.Errorf("%q is not a URL (for a number of redirects write --follow=%s)", raw, raw)
	}
	s := raw
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		msg := err.Error()
		if e, ok := err.(*url.Error); ok {
			ue = e
			msg = ue.Err.Error()
		}
		return nil, fmt.Errorf("malformed URL: %s", msg)
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return nil, fmt.Errorf("unsupported scheme %q (want http or https)", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("URL has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("URL port %q out of range", p)
		}
	}
	return u, nil
}

func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

// parseResolve reads curl's --resolve HOST:PORT:ADDR (ADDR may be [v6]).
func parseResolve(s string) (key, addr string, err error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || parts[0] == "" {
		return "", "", fmt.Errorf("--resolve %q: want HOST:PORT:ADDR", s)
	}
	if n, err := strconv.Atoi(parts[1]); err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("--resolve %q: bad port %q", s, parts[1])
	}
	ip, err := netip.ParseAddr(strings.Trim(parts[2], "[]"))
	if err != nil {
		return "", "", fmt.Errorf("--resolve %q: %q is not an IP address", s, parts[2])
	}
	return strings.ToLower(parts[0]) + ":" + parts[1], ip.String(), nil
}

func hostPortDefault(s, port string) (string, error) {
	if ip, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return net.JoinHostPort(ip.String(), port), nil
	}
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("want ADDR[:PORT]")
	}
	if _, err := netip.ParseAddr(h); err != nil {
		return "", fmt.Errorf("%q is not an IP address", h)
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("bad port %q", p)
	}
	return s, nil
}

// sizeValue is a byte size flag, checked when set (so a bad value from env
// or file is reported with its origin).
type sizeValue struct {
	text string
	n    int64
}

func (v *sizeValue) String() string { return v.text }
func (v *sizeValue) Type() string   { return "size" }
func (v *sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	v.text, v.n = s, n
	return nil
}

// parseSize reads 65536, 64KiB, 64k, 1MiB, 1m.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"kb", 1000}, {"mb", 1000 * 1000}, {"k", 1 << 10}, {"m", 1 << 20}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a size like 65536, 64KiB or 1MiB")
	}
	return n * mult, nil
}

// validToken reports whether s is an HTTP token (method or header name).
func validToken(s string) bool {
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

// policyFlags are the reconciler settings and the target's age.
type policyFlags struct {
	startedAt             string
	age                   time.Duration
	grace                 time.Duration
	failureThreshold      int
	escalateTimeoutsAfter int
	tlsPendingMax         time.Duration
}

func (f *policyFlags) register(fs *pflag.FlagSet, withAge bool) {
	d := policy.DefaultSettings()
	if withAge {
		fs.StringVar(&f.startedAt, "started-at", "", "when the target started (RFC 3339 or unix seconds); none means past grace")
		fs.DurationVar(&f.age, "age", -1, "the target's age instead of --started-at")
		fs.Lookup("age").DefValue = "unknown"
	}
	fs.DurationVar(&f.grace, "grace", d.Grace, "a target younger than this is still booting: decisive failures are ignored")
	fs.IntVar(&f.failureThreshold, "failure-threshold", d.FailureThreshold, "decisive failures in a row, past grace, before a redeploy")
	fs.IntVar(&f.escalateTimeoutsAfter, "escalate-timeouts-after", d.EscalateTimeoutsAfter, "from the Nth timeout in a row on, a timeout counts as decisive (0: never)")
	fs.DurationVar(&f.tlsPendingMax, "tls-pending-max", d.TLSPendingMax, "a TLS error older than this counts as decisive (0: wait forever)")
}

func (f *policyFlags) settings() (policy.Settings, error) {
	s := policy.Settings{
		Grace:                 f.grace,
		FailureThreshold:      f.failureThreshold,
		EscalateTimeoutsAfter: f.escalateTimeoutsAfter,
		TLSPendingMax:         f.tlsPendingMax,
	}
	return s, usageError(s.Validate())
}

// ageAt returns the target's age at now, and whether it is known.
func (f *policyFlags) ageAt(now time.Time) (time.Duration, bool, error) {
	switch {
	case f.startedAt != "" && f.age >= 0:
		return 0, false, usageErrorf("--started-at and --age contradict each other: give one")
	case f.age >= 0:
		return f.age, true, nil
	case f.startedAt != "":
		t, err := parseTime(f.startedAt)
		if err != nil {
			return 0, false, usageErrorf("--started-at %q: %v", f.startedAt, err)
		}
		return now.Sub(t), true, nil
	}
	return 0, false, nil
}

// parseTime reads RFC 3339 or unix seconds.
func parseTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want RFC 3339 (2026-01-02T15:04:05Z) or unix seconds")
	}
	return t, nil
}
