package listen

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path"
	"strings"

	"github.com/healthctl/healthctl/internal/probe"
)

// Allow is --probe-allow: the hosts /probe may probe. A pattern is HOST or
// HOST:PORT; HOST is a name or address, a glob (path.Match: *.example.com)
// or a CIDR prefix (127.0.0.0/8, which matches literal addresses only: a
// name is not resolved to be checked). Without a port, any port of the
// host. A name is compared without case and without a trailing dot.
type Allow struct {
	rules []rule
}

type rule struct {
	host   string
	prefix netip.Prefix
	port   string
	// text is the pattern as given, for errors and the docs.
	text string
}

// ParseAllow reads --probe-allow's patterns.
func ParseAllow(patterns []string) (*Allow, error) {
	a := &Allow{}
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("an empty pattern")
		}
		r := rule{text: p}
		host := p
		if h, port, err := net.SplitHostPort(p); err == nil {
			host, r.port = h, port
		} else if strings.Count(p, ":") == 1 {
			return nil, fmt.Errorf("%q: want HOST or HOST:PORT", p)
		}
		if !strings.Contains(host, "/") && (strings.ContainsAny(host, "[]") || strings.Contains(host, ":") && !validAddr(host)) {
			return nil, fmt.Errorf("%q: want HOST or HOST:PORT ([::1]:8080 for an IPv6 address with a port)", p)
		}
		if pre, err := netip.ParsePrefix(host); err == nil {
			r.prefix = pre.Masked()
		} else {
			host = normHost(host)
			if strings.Contains(host, "/") {
				return nil, fmt.Errorf("%q: not a CIDR prefix", p)
			}
			if _, err := path.Match(host, ""); err != nil {
				return nil, fmt.Errorf("%q: bad pattern: %v", p, err)
			}
			r.host = host
		}
		a.rules = append(a.rules, r)
	}
	return a, nil
}

// AllowURLs is the default --probe-allow: each target's host and port,
// exactly (the targets the watcher already probes, no more).
func AllowURLs(urls []*url.URL) *Allow {
	a := &Allow{}
	seen := map[string]bool{}
	for _, u := range urls {
		if u == nil || u.Hostname() == "" {
			continue
		}
		port := u.Port()
		if port == "" {
			port = probe.DefaultPort(u.Scheme)
		}
		r := rule{host: normHost(u.Hostname()), port: port}
		r.text = net.JoinHostPort(r.host, port)
		if r.host == "" || seen[r.text] {
			continue
		}
		seen[r.text] = true
		a.rules = append(a.rules, r)
	}
	return a
}

// Permits reports whether a URL's host and port are allowed.
func (a *Allow) Permits(u *url.URL) bool {
	host := normHost(u.Hostname())
	port := u.Port()
	if port == "" {
		port = probe.DefaultPort(u.Scheme)
	}
	addr, addrErr := netip.ParseAddr(host)
	for _, r := range a.rules {
		if r.port != "" && r.port != port {
			continue
		}
		if r.prefix.IsValid() {
			if addrErr == nil && r.prefix.Contains(addr.Unmap()) {
				return true
			}
			continue
		}
		if r.host == host {
			return true
		}
		if ok, _ := path.Match(r.host, host); ok && strings.ContainsAny(r.host, "*?[") {
			return true
		}
	}
	return false
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// validAddr reports whether s is an IP address (an IPv6 one has colons).
func validAddr(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
