package target

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/proxyenv"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

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
