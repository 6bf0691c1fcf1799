package listen

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path"
	"strings"

	"github.com/healthctl/healthctl/internal/scheme"
)

// Allow is --probe-allow: the hosts /probe may probe. A pattern is HOST or
// HOST:PORT; HOST is a name or address, a glob (path.Match: *.example.com)
// or a CIDR prefix (127.0.0.0/8, which matches literal addresses only: a
// name is not resolved to be checked). A pattern shaped like an address
// (an address, or a glob of digits and dots: 127.0.0.*, 10.0.?.1) also
// matches addresses only: 127.0.0.* never matches the name
// 127.0.0.1.evil.example, which could resolve anywhere. Without a port,
// any port of the host. A name is compared without case and without a
// trailing dot.
type Allow struct {
	rules []rule
}

type rule struct {
	host   string
	prefix netip.Prefix
	port   string
	// addrGlob: host is a glob shaped like an address, matched against
	// addresses only (in their canonical form).
	addrGlob bool
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
		} else if addr, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
			r.prefix = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		} else {
			host = normHost(host)
			if strings.Contains(host, "/") {
				return nil, fmt.Errorf("%q: not a CIDR prefix", p)
			}
			if _, err := path.Match(host, ""); err != nil {
				return nil, fmt.Errorf("%q: bad pattern: %v", p, err)
			}
			r.host = host
			r.addrGlob = addressShaped(host)
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
			port = scheme.DefaultPort(u.Scheme)
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

// portOf is the port a URL names, else its protocol's default; "" for a
// protocol without ports (icmp://).
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if row, ok := scheme.LookupScheme(u.Scheme); ok && row.Form != "" && row.DefaultPort == "" {
		return ""
	}
	return scheme.DefaultPort(u.Scheme)
}

// Permits reports whether a URL's host and port are allowed. A URL of a
// protocol without ports (icmp://) is allowed by patterns without one.
func (a *Allow) Permits(u *url.URL) bool {
	host := normHost(u.Hostname())
	port := portOf(u)
	if port == "" {
		port = "none"
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
		if r.addrGlob {
			if addrErr == nil {
				if ok, _ := path.Match(r.host, addr.Unmap().String()); ok {
					return true
				}
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

// addressShaped reports whether a host pattern is written for IPv4
// addresses: digits, dots and glob characters only, with a digit.
func addressShaped(p string) bool {
	digit := false
	for _, c := range p {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case strings.ContainsRune(".*?[]-^!\\", c):
		default:
			return false
		}
	}
	return digit
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// validAddr reports whether s is an IP address (an IPv6 one has colons).
func validAddr(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
