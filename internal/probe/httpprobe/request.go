package httpprobe

import (
	"context"
	"crypto/tls"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
	"net"
	"net/http"
	"strings"
	"time"
)

// The builders: the request, dialler and TLS configuration a probe of o
// uses, for any caller that must speak to a target as a probe does
// (drain-test's in-flight requests and kept-alive connection).

// NewRequest is the request o describes: its method and body, the -H
// headers (-H 'Name:' removes a header; -H 'User-Agent: x' wins over
// --user-agent), the Host override, the default User-Agent, and basic auth
// from -u, else from the URL's userinfo, unless -H Authorization was given.
// The URL's userinfo never goes into the request line.
func NewRequest(ctx context.Context, o *scheme.Options) (*http.Request, error) {
	// The request is made for no URL and given a copy of o's (in the
	// URL the empty text parsed to): the request line and Host are the
	// URL's as parsing its text again would make them
	// (TestNewRequestURL), without the text.
	req, err := http.NewRequestWithContext(ctx, o.Method, "", nil)
	if err != nil {
		return nil, err
	}
	setBody(o, req)
	u := req.URL
	*u = *o.URL
	u.User = nil // credentials go in the header, never in text
	u.Host = removeEmptyPort(u.Host)
	req.Host = u.Host
	for k, vs := range o.Header {
		if len(vs) == 1 && vs[0] == "" && k != "User-Agent" {
			// "Name:" removes the header (curl's rule); the transport's
			// own Accept-Encoding is turned off in Transport.
			continue
		}
		req.Header[k] = append([]string(nil), vs...)
	}
	if o.Host != "" {
		req.Host = o.Host
	}
	if _, set := o.Header["User-Agent"]; !set {
		req.Header.Set("User-Agent", o.UserAgent)
	}
	// An explicit -H Authorization wins over -u and URL userinfo (curl's
	// rule).
	if _, set := o.Header["Authorization"]; !set {
		switch {
		case o.HasUser:
			req.SetBasicAuth(o.User, o.Password)
		case o.URL.User != nil:
			pw, _ := o.URL.User.Password()
			req.SetBasicAuth(o.URL.User.Username(), pw)
		}
	}
	return req, nil
}

// removeEmptyPort is host without the empty port of "host:", as
// http.NewRequest sets a request's URL host and Host.
func removeEmptyPort(host string) string {
	if strings.LastIndex(host, ":") > strings.LastIndex(host, "]") {
		return strings.TrimSuffix(host, ":")
	}
	return host
}

// removesHeader reports whether -H 'Name:' asked to remove a header.
func removesHeader(o *scheme.Options, name string) bool {
	vs, ok := o.Header[name]
	return ok && len(vs) == 1 && vs[0] == ""
}

// TLSConfig is the TLS client configuration of o (--cacert, --cert/--key,
// --insecure), with the name the certificate must carry: --servername,
// else the URL's host. As in a probe (and curl), -H 'Host: x' changes the
// request's Host, not the TLS server name. The result is a fresh copy the
// caller may change.
func TLSConfig(o *scheme.Options) *tls.Config {
	tc := o.TLSConfig.Clone()
	if tc == nil {
		tc = &tls.Config{}
	}
	if tc.ServerName == "" && o.URL != nil {
		tc.ServerName = o.URL.Hostname()
	}
	// A client certificate asked for by renegotiation is given once, as
	// curl does (Go refuses renegotiation by default).
	tc.Renegotiation = tls.RenegotiateOnceAsClient
	return tc
}

// Dialer is the dialler of a probe of o, for a "host:port" address: the
// --resolve addresses for it, else an IP literal, else a DNS lookup
// (--dns-server, -4/-6), then the addresses raced as RFC 8305 describes.
// Each call is bounded by o.ConnectTimeout (DNS and connect together, as
// a probe's connect window), when it is set.
func Dialer(o *scheme.Options) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		p := session.New(o, session.Hooks{})
		p.Cancel = func(error) {}
		if o.ConnectTimeout > 0 {
			// No window's timer here: the context's own deadline ends
			// the lookup and the race.
			p.ConnDeadline = time.Now().Add(o.ConnectTimeout)
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, p.ConnDeadline)
			defer cancel()
		}
		return p.Dial(ctx, network, addr)
	}
}

// Transport is an HTTP/1.1 transport that dials and speaks TLS as a probe
// of o does (Dialer, TLSConfig), with a fresh connection per request and
// no proxy: for requests whose own timing is watched (a proxy would buffer
// them). Go's own Accept-Encoding is off when -H 'Accept-Encoding:'
// removes it.
func Transport(o *scheme.Options) *http.Transport {
	return &http.Transport{
		DialContext:        Dialer(o),
		TLSClientConfig:    TLSConfig(o),
		DisableKeepAlives:  true,
		DisableCompression: removesHeader(o, "Accept-Encoding"),
	}
}
