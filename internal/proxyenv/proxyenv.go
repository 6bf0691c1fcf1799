// Package proxyenv reads the proxy variables (HTTP_PROXY, HTTPS_PROXY,
// ALL_PROXY, NO_PROXY) the way curl does. It is pure: the environment is
// a function handed in.
package proxyenv

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// FromEnv selects a proxy the way curl does: http_proxy / HTTP_PROXY for
// http, https_proxy / HTTPS_PROXY for https, ALL_PROXY as a fallback, and
// NO_PROXY (or noproxy, when not empty: --noproxy) listing hosts, domains
// and CIDRs to reach directly, '*' for all; an entry with a port
// (svc.test:9999) matches that port only, as curl and Go's httpproxy have
// it. Unlike Go's ProxyFromEnvironment it proxies loopback too, as curl
// does. Unlike curl, upper-case HTTP_PROXY is read for http:// URLs (as Go
// and most tools read it), except under CGI (REQUEST_METHOD set), where a
// request's Proxy: header arrives as HTTP_PROXY ("httpoxy").
func FromEnv(getenv func(string) string, noproxy string) func(*url.URL) (*url.URL, error) {
	first := func(names ...string) string {
		for _, n := range names {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				return v
			}
		}
		return ""
	}
	httpNames := []string{"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"}
	if getenv("REQUEST_METHOD") != "" {
		httpNames = []string{"http_proxy", "all_proxy", "ALL_PROXY"}
	}
	httpP := first(httpNames...)
	httpsP := first("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
	if noproxy == "" {
		noproxy = first("no_proxy", "NO_PROXY")
	}
	if httpP == "" && httpsP == "" {
		return nil
	}
	return func(u *url.URL) (*url.URL, error) {
		p := httpP
		if u.Scheme == "https" {
			p = httpsP
		}
		if p == "" || bypass(noproxy, u.Hostname(), portOf(u)) {
			return nil, nil
		}
		return Parse(p)
	}
}

// Fixed selects one proxy for every URL but those noproxy lists (NO_PROXY's
// syntax): a blackbox module's proxy_url with its no_proxy.
func Fixed(proxy *url.URL, noproxy string) func(*url.URL) (*url.URL, error) {
	return func(u *url.URL) (*url.URL, error) {
		if bypass(noproxy, u.Hostname(), portOf(u)) {
			return nil, nil
		}
		p := *proxy
		return &p, nil
	}
}

// Parse reads a proxy setting as a URL: one without a scheme is http's,
// as curl reads it.
func Parse(p string) (*url.URL, error) {
	if !strings.Contains(p, "://") {
		p = "http://" + p
	}
	return url.Parse(p)
}

// Check checks a proxy setting early, so a typo is a usage error: it
// must parse, name a host, and use a scheme healthctl speaks (http, https,
// socks5, socks5h; none means http, as curl reads it).
func Check(p string) error {
	u, err := Parse(p)
	if err != nil {
		return errors.New("not a URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "socks5", "socks5h":
	default:
		return fmt.Errorf("unsupported proxy scheme %q (want http, https, socks5 or socks5h)", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("no proxy host")
	}
	return nil
}

// portOf is u's port, or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// bypass says host:port is listed in NO_PROXY's list.
func bypass(list, host, port string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	ip, ipErr := netip.ParseAddr(host)
	for _, e := range strings.Split(list, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e == "*" {
			return true
		}
		if ipErr == nil {
			if pfx, err := netip.ParsePrefix(e); err == nil && pfx.Contains(ip) {
				return true
			}
		}
		if h, p, err := net.SplitHostPort(e); err == nil {
			if p != port {
				continue
			}
			e = h
		}
		e = strings.TrimPrefix(strings.TrimSuffix(e, "."), ".")
		e = strings.Trim(e, "[]")
		if host == e || strings.HasSuffix(host, "."+e) {
			return true
		}
	}
	return false
}
