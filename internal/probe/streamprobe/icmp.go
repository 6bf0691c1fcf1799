package streamprobe

// The ICMP exchange (icmp://HOST): blackbox_exporter's icmp prober, one
// echo request and its reply. The host is resolved through the run's
// DNS (-4/-6, --dns-server) in the connect window, which also opens the
// socket: a Linux ping socket ("udp4"/"udp6": the process's group within
// net.ipv4.ping_group_range), else a raw one (root or CAP_NET_RAW); when
// neither may be opened the probe is this machine's trouble
// (local_error), saying how to allow one. The request goes out in the
// connect window (a send refused by a local firewall is local_error, no
// route host_unreachable or net_unreachable) and the reply is waited for
// in the read window: no reply is the read window's timeout, never a hang. A
// destination unreachable that quotes the request is host_unreachable or
// net_unreachable; anything else that comes (another process's echo, the
// request itself looped back to a raw socket) is skipped. The bytes are
// internal/icmpwire's.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/eyeballs"
	"github.com/healthctl/healthctl/internal/icmpwire"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

type icmpExchange struct {
	cv   Conversation
	q    icmpwire.Query
	pc   *icmp.PacketConn
	addr netip.Addr
	// raw: the socket is a raw one (it sees every echo reply; a ping
	// socket's ID is the kernel's).
	raw  bool
	data []byte
	// echo: the reply came, with its hop limit (-1 unknown).
	echo bool
	hop  int
	// notPermitted: neither socket may be opened.
	notPermitted string
}

func NewICMP(_ context.Context, p *session.Probe) (session.Exchange, error) {
	q, err := icmpwire.ParseQuery(p.Opts.URL)
	if err != nil {
		return nil, err
	}
	return &icmpExchange{cv: Conversation{P: p}, q: q, hop: -1}, nil
}

func (e *icmpExchange) Answered() bool { return e.cv.First }

func (e *icmpExchange) Close() { e.cv.Close() }

// icmpSeq numbers the echo requests of the process.
var icmpSeq atomic.Uint32

func (e *icmpExchange) Run(ctx context.Context) error {
	if err := e.setup(ctx); err != nil {
		return err
	}
	cv := &e.cv
	v6 := !e.addr.Is4()
	id := os.Getpid() & 0xffff
	seq := int(icmpSeq.Add(1) & 0xffff)
	e.data = icmpwire.Data(e.q.Size)
	req, err := icmpwire.Request(v6, id, seq, e.data)
	if err != nil {
		return err
	}
	var dst net.Addr = &net.IPAddr{IP: e.addr.AsSlice(), Zone: e.addr.Zone()}
	if !e.raw {
		dst = &net.UDPAddr{IP: e.addr.AsSlice(), Zone: e.addr.Zone()}
	}
	// Sent in the connect window: a send refused here (a local
	// firewall: EPERM) is this machine's, no route the network's.
	if _, err := e.pc.WriteTo(req, dst); err != nil {
		return err
	}
	cv.Connected()
	cv.ArmRead()
	rb := make([]byte, 1500+len(e.data))
	for {
		n, hop, peer, err := e.read(rb)
		if err != nil {
			return err
		}
		v, err := icmpwire.Match(v6, rb[:n], id, seq, e.raw, e.data)
		if v == icmpwire.Other || v == icmpwire.Reply && peerAddr(peer) != e.addr.WithZone("") {
			// A destination unreachable comes from a router on the
			// way; a reply only from the host.
			continue
		}
		cv.GotFirstByte()
		cv.Done()
		if v == icmpwire.Unreachable {
			return err
		}
		e.echo, e.hop = true, hop
		return nil
	}
}

// setup resolves the host and opens the socket, in the connect window.
func (e *icmpExchange) setup(ctx context.Context) (err error) {
	p, o := e.cv.P, e.cv.P.Opts
	u := o.URL
	deadline := p.OpenConnectWindow(u)
	defer func() { p.CloseConnectWindow(err, deadline) }()
	dctx := session.NewDeadlined(ctx, deadline)
	addrs, err := p.Addresses(&dctx, u.Hostname(), scheme.DefaultPort(u.Scheme), nil)
	if err != nil {
		return err
	}
	e.addr = addrs[0].Unmap()
	t0 := time.Now()
	p.Mu.Lock()
	p.Address, p.Family = e.addr.String(), eyeballs.Family(e.addr)
	p.EnterAt(classify.StageConnect, t0)
	p.Mu.Unlock()
	err = e.open()
	p.Mu.Lock()
	p.Record(result.PhaseConnect, time.Since(t0))
	p.Mu.Unlock()
	return err
}

// open opens a ping socket, else a raw one, and keeps it with the run's
// connections (a window that closes closes it).
func (e *icmpExchange) open() error {
	p := e.cv.P
	listen := p.Opts.ICMPSocket
	if listen == nil {
		listen = icmp.ListenPacket
	}
	ping, raw, any := "udp4", "ip4:icmp", "0.0.0.0"
	if !e.addr.Is4() {
		ping, raw, any = "udp6", "ip6:ipv6-icmp", "::"
	}
	pc, err := listen(ping, any)
	if err != nil {
		var rerr error
		pc, rerr = listen(raw, any)
		if rerr != nil {
			if icmpwire.Permission(err) && icmpwire.Permission(rerr) {
				err := notPermitted(rerr)
				e.notPermitted = err.Error()
				return err
			}
			return fmt.Errorf("a ping socket: %w; a raw socket: %w", err, rerr)
		}
		e.raw = true
	}
	e.pc = pc
	c := icmpConn{pc}
	e.cv.Conn = c
	p.Mu.Lock()
	p.KeepConn(c)
	p.Mu.Unlock()
	// A backstop only: the windows close the socket first.
	pc.SetDeadline(p.Start.Add(p.Opts.MaxTime + 2*session.MaxTimeBackstop))
	if e.addr.Is4() {
		if e.q.TTL > 0 {
			pc.IPv4PacketConn().SetTTL(e.q.TTL)
		}
		pc.IPv4PacketConn().SetControlMessage(ipv4.FlagTTL, true)
	} else {
		if e.q.TTL > 0 {
			pc.IPv6PacketConn().SetHopLimit(e.q.TTL)
		}
		pc.IPv6PacketConn().SetControlMessage(ipv6.FlagHopLimit, true)
	}
	return nil
}

// notPermitted says neither socket may be opened, and how to allow one.
func notPermitted(err error) error {
	rng := "unknown"
	if b, rerr := os.ReadFile("/proc/sys/net/ipv4/ping_group_range"); rerr == nil {
		rng = strings.Join(strings.Fields(string(b)), " ")
	}
	return &icmpwire.NotPermittedError{GID: os.Getgid(), Range: rng, Err: err}
}

// read reads one ICMP message, with the hop limit it came with (-1
// unknown) and its source.
func (e *icmpExchange) read(b []byte) (n, hop int, peer net.Addr, err error) {
	hop = -1
	if e.addr.Is4() {
		var cm *ipv4.ControlMessage
		n, cm, peer, err = e.pc.IPv4PacketConn().ReadFrom(b)
		if cm != nil {
			hop = cm.TTL
		}
		return
	}
	var cm *ipv6.ControlMessage
	n, cm, peer, err = e.pc.IPv6PacketConn().ReadFrom(b)
	if cm != nil {
		hop = cm.HopLimit
	}
	return
}

// icmpConn is the ICMP socket as the run's connections are kept (closed
// when a window closes); the exchange reads and writes it itself.
type icmpConn struct{ *icmp.PacketConn }

var errICMPConn = errors.New("an ICMP socket is read and written by the exchange")

func (icmpConn) Read([]byte) (int, error)  { return 0, errICMPConn }
func (icmpConn) Write([]byte) (int, error) { return 0, errICMPConn }
func (icmpConn) RemoteAddr() net.Addr      { return nil }

// peerAddr is a message's source address.
func peerAddr(a net.Addr) netip.Addr {
	var ip net.IP
	switch a := a.(type) {
	case *net.UDPAddr:
		ip = a.IP
	case *net.IPAddr:
		ip = a.IP
	}
	p, _ := netip.AddrFromSlice(ip)
	return p.Unmap()
}

func (e *icmpExchange) Describe(_ error, _ time.Time, res *result.Result, obs *classify.Observation, _ *classify.Facts) {
	a := &icmpwire.Answer{Echo: e.echo, Bytes: len(e.data), HopLimit: e.hop, NotPermitted: e.notPermitted,
		Setup: res.Timings.Of(result.PhaseConnect).Seconds(), RTT: res.Timings.Of(result.PhaseTTFB).Seconds()}
	if res.Address != "" || e.addr.IsValid() {
		a.Resolve = res.Timings.Of(result.PhaseDNS).Seconds()
	}
	a.Socket = "ping"
	if e.raw {
		a.Socket = "raw"
	}
	obs.Answer = a
}
