package probe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"github.com/healthctl/healthctl/internal/classify"
)

// resolver uses Go's own resolver (PreferGo), so tests under -race (cgo) and
// the static release resolve the same way; --dns-server replaces the
// system's servers.
func (p *run) resolver() *net.Resolver {
	r := &net.Resolver{PreferGo: true}
	if srv := p.opts.DNSServer; srv != "" {
		r.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, srv)
		}
	}
	return r
}

func (p *run) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	network := "ip"
	switch p.opts.Network {
	case "tcp4":
		network = "ip4"
	case "tcp6":
		network = "ip6"
	}
	addrs, err := p.resolver().LookupNetIP(ctx, network, host)
	var ae *net.AddrError
	if errors.As(err, &ae) && network != "ip" {
		// The hosts file knows the name, but not with this family's
		// address: the name exists and has no such record.
		return nil, p.noAddress(host)
	}
	var de *net.DNSError
	if errors.As(err, &de) && p.opts.DNSServer != "" {
		// Go names resolv.conf's server even when Dial went elsewhere.
		de.Server = p.opts.DNSServer
	}
	if errors.As(err, &de) && de.IsNotFound {
		a := p.askAgain(ctx, host, network)
		p.mu.Lock()
		p.dnsAnswer = a
		p.mu.Unlock()
		if a == classify.DNSNoRecords {
			// Go's text says "no such host" for both; say what it is.
			de.Err = "no " + addrKind(network) + " record for the name (it exists)"
		}
	}
	return addrs, err
}

func addrKind(network string) string {
	switch network {
	case "ip4":
		return "A"
	case "ip6":
		return "AAAA"
	}
	return "A/AAAA"
}

// askAgain tells NXDOMAIN from an empty NOERROR answer, which Go reports
// alike, with one direct query to the first configured server.
func (p *run) askAgain(ctx context.Context, host, network string) classify.DNSAnswer {
	server := p.opts.DNSServer
	if server == "" {
		conf, err := dns.ClientConfigFromFile("/etc/resolv.conf")
		if err != nil || len(conf.Servers) == 0 {
			return classify.DNSUnknown
		}
		server = net.JoinHostPort(conf.Servers[0], conf.Port)
	}
	qtype := dns.TypeA
	if network == "ip6" {
		qtype = dns.TypeAAAA
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(strings.TrimSuffix(host, ".")), qtype)
	m.RecursionDesired = true
	c := &dns.Client{}
	in, _, err := c.ExchangeContext(ctx, m, server)
	if err != nil || in == nil {
		return classify.DNSUnknown
	}
	switch in.Rcode {
	case dns.RcodeNameError:
		return classify.DNSNameMissing
	case dns.RcodeSuccess:
		return classify.DNSNoRecords
	}
	return classify.DNSUnknown
}
