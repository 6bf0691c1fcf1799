package session

import (
	"context"
	"net/netip"
	"slices"
	"strings"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/eyeballs"
	"github.com/healthctl/healthctl/internal/resolve"
	"github.com/healthctl/healthctl/internal/scheme"
)

// lookup resolves host through the run's DNS client (--dns-server, -4/-6)
// and keeps what the follow-up query learnt for classify.
func (p *Probe) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, answer, err := p.DNS.Lookup(ctx, host)
	if err != nil {
		p.Mu.Lock()
		p.dnsAnswer = answer
		p.Mu.Unlock()
	}
	return addrs, err
}

// noAddress is the error for a name that resolved, but not to the family
// asked for (-4/-6): the name exists and has no address of that kind.
func (p *Probe) noAddress(host string) error {
	p.Mu.Lock()
	p.dnsAnswer = classify.DNSNoRecords
	p.Mu.Unlock()
	return resolve.NoAddress(host, p.Opts.Network)
}

// FixedAddrs are the addresses of host:port known without a lookup:
// --resolve's, the IP literal itself, or localhost's loopback, appended to
// buf[:0] (nil: a slice of their own).
func FixedAddrs(o *scheme.Options, host, port string, buf []netip.Addr) ([]netip.Addr, bool) {
	if as, ok := resolved(o, host, port); ok {
		addrs := buf[:0]
		for _, a := range as {
			addrs = append(addrs, netip.MustParseAddr(a))
		}
		return addrs, true
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return append(buf[:0], ip), true
	}
	if isLocalhost(host) {
		// RFC 6761: localhost is the loopback, in both families, and
		// is never asked of DNS (nor of a hosts file that may list only
		// one family), as curl does.
		return append(buf[:0], netip.IPv6Loopback(), netip.AddrFrom4([4]byte{127, 0, 0, 1})), true
	}
	return nil, false
}

// resolved is the --resolve entry for host and port.
func resolved(o *scheme.Options, host, port string) ([]string, bool) {
	if len(o.Resolve) == 0 {
		return nil, false
	}
	as, ok := o.Resolve[strings.ToLower(host)+":"+port]
	return as, ok
}

// IsFixed is fixedAddrs without the addresses: whether host needs no
// lookup.
func IsFixed(o *scheme.Options, host, port string) bool {
	if _, ok := resolved(o, host, port); ok {
		return true
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return true
	}
	return isLocalhost(host)
}

// isLocalhost: the name is localhost or under it (RFC 6761).
func isLocalhost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// OfFamily keeps the addresses of the family -4/-6 asks for, and of the
// family Prefer names when there is any.
func OfFamily(o *scheme.Options, addrs []netip.Addr) []netip.Addr {
	addrs = slices.DeleteFunc(addrs, func(a netip.Addr) bool {
		return (o.Network == "tcp4" && eyeballs.Family(a) != 4) || (o.Network == "tcp6" && eyeballs.Family(a) != 6)
	})
	if o.Prefer != 0 && slices.ContainsFunc(addrs, func(a netip.Addr) bool { return eyeballs.Family(a) == o.Prefer }) {
		addrs = slices.DeleteFunc(addrs, func(a netip.Addr) bool { return eyeballs.Family(a) != o.Prefer })
	}
	return addrs
}
