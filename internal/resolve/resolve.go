// Package resolve looks a name up as a probe does: Go's own resolver
// (PreferGo, so tests under -race, which use cgo, and the static release
// resolve alike), --dns-server in place of the system's servers, -4/-6,
// and the facts Go's errors lose: whether the DNS server itself could not
// be reached, and whether "no such host" was NXDOMAIN or an empty answer
// (one direct query, Query, asks again).
package resolve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/healthctl/healthctl/internal/classify"
)

// Client looks names up for one probe. It is safe for concurrent use.
type Client struct {
	// Server is --dns-server ("addr:port"), "" for the system's servers.
	Server string
	// Network is "tcp", "tcp4" (-4) or "tcp6" (-6).
	Network string

	mu sync.Mutex
	// unreachable is the first error that said a DNS server could not be
	// reached (refused, no route).
	unreachable error
	// replies is what the DNS servers' replies said, read as they
	// arrived (Go's errors say "server misbehaving" for every rcode).
	replies replyNotes
}

// Lookup resolves host. When the name did not resolve, answer says what a
// follow-up query learnt (NXDOMAIN or no records); the error is then a
// *net.DNSError whose text says which, and which wraps the reason a DNS
// server could not be reached, when that was the trouble.
func (c *Client) Lookup(ctx context.Context, host string) (addrs []netip.Addr, answer classify.DNSAnswer, err error) {
	network := "ip"
	switch c.Network {
	case "tcp4":
		network = "ip4"
	case "tcp6":
		network = "ip6"
	}
	// The notes are this lookup's (a probe that follows redirects looks
	// up each hop's name in turn).
	c.mu.Lock()
	c.replies = replyNotes{}
	c.mu.Unlock()
	addrs, err = c.resolver().LookupNetIP(ctx, network, host)
	var ae *net.AddrError
	if errors.As(err, &ae) && network != "ip" {
		// The hosts file knows the name, but not with this family's
		// address: the name exists and has no such record.
		return nil, classify.DNSNoRecords, NoAddress(host, c.Network)
	}
	var de *net.DNSError
	if !errors.As(err, &de) {
		return addrs, classify.DNSUnknown, err
	}
	if c.Server != "" {
		// Go names resolv.conf's server even when Dial went elsewhere.
		de.Server = c.Server
	}
	if !de.IsNotFound && !de.IsTimeout {
		// A failure that is neither "no such name" nor a timeout: if a
		// server refused or could not be routed to, say so through the
		// error chain (classify: resolver_unreachable).
		c.mu.Lock()
		if de.UnwrapErr == nil {
			de.UnwrapErr = c.unreachable
		}
		c.mu.Unlock()
	}
	if !de.IsNotFound {
		// What the replies said: an rcode Go does not name, or no
		// usable reply at all (also behind a timeout: Go waits past a
		// reply that does not parse).
		c.mu.Lock()
		a, text := c.replies.answer()
		c.mu.Unlock()
		if a != classify.DNSUnknown && (!de.IsTimeout || a == classify.DNSNoUsableAnswer) {
			de.Err = text
			return addrs, a, err
		}
	}
	if de.IsNotFound {
		var chain string
		answer, chain = c.askAgain(ctx, host, network)
		if chain != "" {
			// The name exists, as an alias whose chain never reaches
			// an address: the chain is what to fix.
			de.Err = chain
			return addrs, answer, err
		}
		if answer == classify.DNSNoRecords {
			// Go's text says "no such host" for both; say what it is.
			de.Err = "no " + addrKind(network) + " record for the name (it exists)"
		}
	}
	return addrs, answer, err
}

// NoAddress is the error for a name that resolved, but not to the family
// asked for (-4/-6, network "tcp4"/"tcp6"): the name exists and has no
// address of that kind (classify.DNSNoRecords).
func NoAddress(host, network string) error {
	kind := "A"
	if network == "tcp6" {
		kind = "AAAA"
	}
	return &net.DNSError{Err: "no " + kind + " record for the name (it exists)", Name: host, IsNotFound: true}
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

// resolver is Go's resolver with --dns-server in place of the system's
// servers. Every connection to a DNS server goes through noting, which
// keeps the first error that says the server itself could not be reached:
// Go's *net.DNSError carries only its text, and "connection refused" from
// the DNS server is the prober's trouble, not the target's.
func (c *Client) resolver() *net.Resolver {
	r := &net.Resolver{PreferGo: true}
	r.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if c.Server != "" {
			addr = c.Server
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			c.note(err)
			return nil, err
		}
		// Go's resolver reads with the context's deadline only: a
		// lookup cancelled (the probe's window closed) would keep its
		// goroutines reading a silent server for the resolver's own
		// timeout. Closing the conn ends them now (goleak).
		context.AfterFunc(ctx, func() { conn.Close() })
		if uc, ok := conn.(*net.UDPConn); ok {
			// Go's resolver frames a query by the conn's type: a
			// net.PacketConn gets datagrams, anything else TCP's length
			// prefix. The wrapper must stay a PacketConn.
			return &notingPacketConn{UDPConn: uc, c: c}, nil
		}
		return &notingConn{Conn: conn, c: c}, nil
	}
	return r
}

// notingConn notes the errors of a connection to a DNS server.
type notingConn struct {
	net.Conn
	c *Client
	// buf holds the bytes read so far of the reply being read.
	buf []byte
}

func (n *notingConn) Read(b []byte) (int, error) {
	k, err := n.c.noted(n.Conn.Read(b))
	n.c.mu.Lock()
	n.c.replies.stream(&n.buf, b[:k], err)
	n.c.mu.Unlock()
	return k, err
}
func (n *notingConn) Write(b []byte) (int, error) { return n.c.noted(n.Conn.Write(b)) }

// notingPacketConn is notingConn for UDP.
type notingPacketConn struct {
	*net.UDPConn
	c *Client
}

func (n *notingPacketConn) Read(b []byte) (int, error) {
	k, err := n.c.noted(n.UDPConn.Read(b))
	if err == nil {
		n.c.mu.Lock()
		n.c.replies.reply(b[:k], false)
		n.c.mu.Unlock()
	}
	return k, err
}
func (n *notingPacketConn) Write(b []byte) (int, error) { return n.c.noted(n.UDPConn.Write(b)) }

// noted passes a read or write through, noting its error.
func (c *Client) noted(n int, err error) (int, error) {
	if err != nil {
		c.note(err)
	}
	return n, err
}

// note keeps the first error that says a DNS server could not be reached
// at all.
func (c *Client) note(err error) {
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENETUNREACH) && !errors.Is(err, syscall.EHOSTUNREACH) {
		return
	}
	c.mu.Lock()
	if c.unreachable == nil {
		c.unreachable = err
	}
	c.mu.Unlock()
}

// MaxCNAMEs is how many CNAME links askAgain follows from the name asked
// before it calls the chain too long.
const MaxCNAMEs = 16

// askAgain tells NXDOMAIN from an empty NOERROR answer, which Go reports
// alike, with one direct query over UDP to the first configured server
// (--dns-server, else resolv.conf's first nameserver). Only the answer's
// header is needed for that: its rcode is all the question needs, and a
// truncated answer carries it as well as a whole one. A NOERROR answer
// that is a CNAME chain without an address is followed (asking again for
// where a server's answer stopped, up to MaxCNAMEs links): a loop or a
// chain past the limit is chain's text (the answer stays DNSNoRecords:
// the name exists and reaches no address).
func (c *Client) askAgain(ctx context.Context, host, network string) (answer classify.DNSAnswer, chain string) {
	server := c.Server
	if server == "" {
		ns, err := FirstNameserver("/etc/resolv.conf")
		if err != nil || ns == "" {
			return classify.DNSUnknown, ""
		}
		server = net.JoinHostPort(ns, "53")
	}
	qtype := dnsmessage.TypeA
	if network == "ip6" {
		qtype = dnsmessage.TypeAAAA
	}
	name := strings.ToLower(strings.TrimSuffix(host, ".")) + "."
	r, err := ask(ctx, server, name, qtype)
	if err != nil {
		return classify.DNSUnknown, ""
	}
	switch r.rcode {
	case dnsmessage.RCodeNameError:
		return classify.DNSNameMissing, ""
	case dnsmessage.RCodeSuccess:
		if text := followChain(name, r, func(n string) (reply, error) { return ask(ctx, server, n, qtype) }); text != "" {
			return classify.DNSNoRecords, text
		}
		return classify.DNSNoRecords, ""
	}
	return classify.DNSUnknown, ""
}

// followChain follows the CNAME chain from name through first and, where
// an answer stops at an alias without an address, through what again
// says of that alias. It returns "CNAME loop: a → b → a" or "CNAME chain
// longer than N: …", or "" for a chain that ends (at an address, at a
// name without records, or where an answer says no more).
func followChain(name string, first reply, again func(string) (reply, error)) string {
	names := []string{name}
	seen := map[string]bool{name: true}
	r := first
	for {
		progressed := false
		for {
			next, ok := r.cnames[names[len(names)-1]]
			if !ok {
				break
			}
			progressed = true
			names = append(names, next)
			if seen[next] {
				return "CNAME loop: " + chainText(names)
			}
			seen[next] = true
			if len(names)-1 > MaxCNAMEs {
				return fmt.Sprintf("CNAME chain longer than %d: %s → … → %s",
					MaxCNAMEs, dotless(names[0]), dotless(names[len(names)-1]))
			}
		}
		if !progressed || r.hasAddr {
			return ""
		}
		var err error
		if r, err = again(names[len(names)-1]); err != nil || r.rcode != dnsmessage.RCodeSuccess {
			return ""
		}
	}
}

func chainText(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = dotless(n)
	}
	return strings.Join(out, " → ")
}

func dotless(name string) string { return strings.TrimSuffix(name, ".") }
