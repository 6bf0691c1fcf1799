package target

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// Template is an Input once validated and its files read: everything but the
// URL.
type Template struct {
	opts scheme.Options
	in   *Input
}

// Options returns a copy of the template's options without a URL.
func (t *Template) Options() scheme.Options { return t.opts }

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

func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}
