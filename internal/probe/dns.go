package probe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"syscall"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/dnsrcode"
)

// resolver uses Go's own resolver (PreferGo), so tests under -race (cgo) and
// the static release resolve the same way; --dns-server replaces the
// system's servers.
//
// Every connection to a DNS server goes through resolverConn, which keeps
// the first error that says the server itself could not be reached: Go's
// *net.DNSError carries only its text, and "connection refused" from the
// DNS server is the prober's trouble, not the target's.
func (p *run) resolver() *net.Resolver {
	r := &net.Resolver{PreferGo: true}
	srv := p.opts.DNSServer
	r.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if srv != "" {
			addr = srv
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			p.noteResolverErr(err)
			return nil, err
		}
		// Go's resolver reads with the context's deadline only: a
		// lookup cancelled (the probe's window closed) would keep its
		// goroutines reading a silent server for the resolver's own
		// timeout. Closing the conn ends them now (goleak, leak_test.go).
		context.AfterFunc(ctx, func() { c.Close() })
		if uc, ok := c.(*net.UDPConn); ok {
			// Go's resolver frames a query by the conn's type: a
			// net.PacketConn gets datagrams, anything else TCP's length
			// prefix. The wrapper must stay a PacketConn.
			return &resolverPacketConn{UDPConn: uc, p: p}, nil
		}
		return &resolverConn{Conn: c, p: p}, nil
	}
	return r
}

// resolverPacketConn is resolverConn for UDP.
type resolverPacketConn struct {
	*net.UDPConn
	p *run
}

func (c *resolverPacketConn) Read(b []byte) (int, error)  { return c.p.noted(c.UDPConn.Read(b)) }
func (c *resolverPacketConn) Write(b []byte) (int, error) { return c.p.noted(c.UDPConn.Write(b)) }

// noted passes a read or write through, noting its error.
func (p *run) noted(n int, err error) (int, error) {
	if err != nil {
		p.noteResolverErr(err)
	}
	return n, err
}

// resolverConn notes the errors of a connection to a DNS server.
type resolverConn struct {
	net.Conn
	p *run
}

func (c *resolverConn) Read(b []byte) (int, error)  { return c.p.noted(c.Conn.Read(b)) }
func (c *resolverConn) Write(b []byte) (int, error) { return c.p.noted(c.Conn.Write(b)) }

// noteResolverErr keeps the first error that says a DNS server could not be
// reached at all.
func (p *run) noteResolverErr(err error) {
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENETUNREACH) && !errors.Is(err, syscall.EHOSTUNREACH) {
		return
	}
	p.mu.Lock()
	if p.resolverErr == nil {
		p.resolverErr = err
	}
	p.mu.Unlock()
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
	if errors.As(err, &de) && !de.IsNotFound && !de.IsTimeout {
		// A failure that is neither "no such name" nor a timeout: if a
		// server refused or could not be routed to, say so through the
		// error chain (classify: resolver_unreachable).
		p.mu.Lock()
		if de.UnwrapErr == nil {
			de.UnwrapErr = p.resolverErr
		}
		p.mu.Unlock()
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
// alike, with one direct query over UDP to the first configured server
// (--dns-server, else resolv.conf's first nameserver). Only the answer's
// header is read: its rcode is all the question needs, and a truncated
// answer carries it as well as a whole one.
func (p *run) askAgain(ctx context.Context, host, network string) classify.DNSAnswer {
	server := p.opts.DNSServer
	if server == "" {
		ns, err := dnsrcode.FirstNameserver("/etc/resolv.conf")
		if err != nil || ns == "" {
			return classify.DNSUnknown
		}
		server = net.JoinHostPort(ns, "53")
	}
	qtype := dnsmessage.TypeA
	if network == "ip6" {
		qtype = dnsmessage.TypeAAAA
	}
	rcode, err := dnsrcode.Query(ctx, server, strings.TrimSuffix(host, ".")+".", qtype)
	if err != nil {
		return classify.DNSUnknown
	}
	switch rcode {
	case dnsmessage.RCodeNameError:
		return classify.DNSNameMissing
	case dnsmessage.RCodeSuccess:
		return classify.DNSNoRecords
	}
	return classify.DNSUnknown
}
