package demo

import (
	"errors"
	"net"
	"strings"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/healthctl/healthctl/internal/crash"
)

// dnsServer answers the demo's one DNS question on loopback UDP: every
// name under .invalid (a top-level domain that never exists, RFC 2606)
// does not exist (NXDOMAIN, with the SOA a resolver needs to trust a
// negative answer); anything else is REFUSED, so the demo's probes never
// resolve a real name. It never forwards a query.
type dnsServer struct {
	addr string
	pc   net.PacketConn
	done chan struct{}
}

func startDNS(addr string) (*dnsServer, error) {
	pc, err := net.ListenPacket("udp4", addr)
	if err != nil {
		return nil, err
	}
	d := &dnsServer{addr: pc.LocalAddr().String(), pc: pc, done: make(chan struct{})}
	go d.serve()
	return d, nil
}

func (d *dnsServer) close() {
	d.pc.Close()
	<-d.done
}

func (d *dnsServer) serve() {
	defer close(d.done)
	defer crash.Recover()
	buf := make([]byte, 1500)
	for {
		n, from, err := d.pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if out := dnsAnswer(buf[:n]); out != nil {
			d.pc.WriteTo(out, from)
		}
	}
}

// dnsAnswer returns the packed reply to one query, or nil for a message
// that is not a query.
func dnsAnswer(query []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil
	}
	qs, err := p.AllQuestions()
	m := dnsmessage.Message{Header: dnsmessage.Header{ID: h.ID, Response: true, OpCode: h.OpCode,
		RecursionDesired: h.RecursionDesired, RecursionAvailable: true}}
	switch {
	case err != nil || len(qs) != 1:
		m.Header.RCode = dnsmessage.RCodeFormatError
	case underInvalid(qs[0].Name.String()):
		m.Header.RCode = dnsmessage.RCodeNameError
		m.Header.Authoritative = true
		m.Questions = qs
		m.Authorities = []dnsmessage.Resource{{
			Header: dnsmessage.ResourceHeader{Name: dnsmessage.MustNewName("invalid."), Type: dnsmessage.TypeSOA, Class: dnsmessage.ClassINET, TTL: 5},
			Body: &dnsmessage.SOAResource{NS: dnsmessage.MustNewName("ns.invalid."), MBox: dnsmessage.MustNewName("hostmaster.invalid."),
				Serial: 1, Refresh: 60, Retry: 60, Expire: 60, MinTTL: 5},
		}}
	default:
		m.Header.RCode = dnsmessage.RCodeRefused
		m.Questions = qs
	}
	out, err := m.Pack()
	if err != nil {
		return nil
	}
	return out
}

// underInvalid says whether name has an "invalid" label (nx.invalid., and
// a resolver's search-list expansion nx.invalid.corp.example. alike).
func underInvalid(name string) bool {
	for _, l := range strings.Split(strings.ToLower(strings.TrimSuffix(name, ".")), ".") {
		if l == "invalid" {
			return true
		}
	}
	return false
}
