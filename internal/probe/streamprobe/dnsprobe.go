package streamprobe

// The DNS exchange (dns://): one query to the DNS server the URL names,
// the question from its path and parameters (internal/dnswire), over UDP
// (blackbox_exporter's default) or TCP (transport=tcp). TCP connects
// through the run's dialler as every conversation does; UDP resolves the
// server through the run's DNS and "connects" a UDP socket to the first
// address of the family asked for (and to the next when one refuses: ICMP
// port unreachable, as dig moves on). Both write the query once the connect
// window is closed and wait for the reply in the read window: a server
// that never answers is the read window's timeout, never a hang. A reply
// with another ID is skipped, as blackbox's client (miekg/dns) skips it;
// a truncated reply is judged as it came (no TCP retry), as blackbox
// judges it.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/dnswire"
	"github.com/healthctl/healthctl/internal/eyeballs"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

type dnsExchange struct {
	cv    Conversation
	q     dnswire.Query
	id    uint16
	reply *dnswire.Reply
	// seen is what came instead of a reply (quoted), "" for a reply.
	seen string
	// UDP: the server's addresses not yet tried, the context and the
	// query for a retry on the next one when one refuses (ICMP port
	// unreachable), as dig moves on.
	next  []netip.AddrPort
	ctx   context.Context
	query []byte
}

func NewDNS(_ context.Context, p *session.Probe) (session.Exchange, error) {
	q, err := dnswire.ParseURL(p.Opts.URL)
	if err != nil {
		return nil, err
	}
	return &dnsExchange{cv: Conversation{P: p}, q: q}, nil
}

func (d *dnsExchange) Answered() bool { return d.cv.First }

func (d *dnsExchange) Close() { d.cv.Close() }

// errNoReply is a TCP connection closed before a whole reply.
var errNoReply = errors.New("the server closed the connection without a DNS reply")

func (d *dnsExchange) Run(ctx context.Context) error {
	cv := &d.cv
	port := scheme.DefaultPort(cv.P.Opts.URL.Scheme)
	if d.q.TCP {
		if err := cv.Connect(ctx, port); err != nil {
			return err
		}
	} else if err := d.connectUDP(ctx, port); err != nil {
		return err
	}
	cv.Connected()
	d.id = uint16(rand.Uint32())
	msg, err := d.q.Pack(d.id)
	if err != nil {
		return err
	}
	if err := cv.Send(msg); err != nil {
		return err
	}
	d.ctx, d.query = ctx, msg
	if d.q.TCP {
		return d.readTCP()
	}
	return d.readUDP()
}

// connectUDP resolves the server (the dns stage) and opens a UDP socket
// to its first address of the family asked for, in the connect window.
func (d *dnsExchange) connectUDP(ctx context.Context, defaultPort string) (err error) {
	p, o := d.cv.P, d.cv.P.Opts
	u := o.URL
	deadline := p.OpenConnectWindow(u)
	defer func() { p.CloseConnectWindow(err, deadline) }()
	dctx := session.NewDeadlined(ctx, deadline)
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	addrs, err := p.Addresses(&dctx, u.Hostname(), port, nil)
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(port)
	for _, a := range addrs[1:] {
		d.next = append(d.next, netip.AddrPortFrom(a, uint16(n)))
	}
	t0 := time.Now()
	p.Mu.Lock()
	p.EnterAt(classify.StageConnect, t0)
	p.Mu.Unlock()
	err = d.dialUDP(&dctx, netip.AddrPortFrom(addrs[0], uint16(n)))
	for err != nil && len(d.next) > 0 && dctx.Err() == nil {
		// No socket to that address (a family this host lacks): the
		// next.
		err = d.dialUDP(&dctx, d.next[0])
		d.next = d.next[1:]
	}
	p.Mu.Lock()
	p.Record(result.PhaseConnect, time.Since(t0))
	p.Mu.Unlock()
	return err
}

// dialUDP opens the UDP socket to ap (the probe's address from now on).
func (d *dnsExchange) dialUDP(ctx context.Context, ap netip.AddrPort) error {
	p := d.cv.P
	p.Mu.Lock()
	p.Address, p.Family = ap.String(), eyeballs.Family(ap.Addr())
	p.Mu.Unlock()
	var dialer net.Dialer
	c, err := dialer.DialContext(ctx, "udp", ap.String())
	if err != nil {
		return err
	}
	p.Mu.Lock()
	p.KeepConn(c)
	p.Mu.Unlock()
	// A backstop only: the windows close the socket first.
	c.SetDeadline(p.Start.Add(p.Opts.MaxTime + 2*session.MaxTimeBackstop))
	d.cv.Conn = c
	return nil
}

// retry sends the query to the server's next address when the last one
// refused it or had no route (ICMP), in the same read window; false when none is left.
func (d *dnsExchange) retry(err error) (bool, error) {
	answered := errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
	if !answered || len(d.next) == 0 {
		return false, err
	}
	ap := d.next[0]
	d.next = d.next[1:]
	d.cv.Conn.Close()
	if err := d.dialUDP(d.ctx, ap); err != nil {
		return false, err
	}
	_, err = d.cv.Conn.Write(d.query)
	return err == nil, err
}

// maxUDP is the largest datagram read.
const maxUDP = 65535

// udpBufs are the datagram buffers (64 KiB each) of the probes running.
var udpBufs = sync.Pool{New: func() any { return new([maxUDP]byte) }}

// readUDP reads datagrams until one carries the query's ID.
func (d *dnsExchange) readUDP() error {
	cv := &d.cv
	b := udpBufs.Get().(*[maxUDP]byte)
	defer udpBufs.Put(b)
	buf := b[:]
	for {
		n, err := cv.Conn.Read(buf)
		if err != nil {
			again, err := d.retry(err)
			if !again {
				return err
			}
			continue
		}
		if !cv.First {
			cv.GotFirstByte()
		}
		if d.other(buf[:n]) {
			continue
		}
		return d.read(buf[:n])
	}
}

// readTCP reads length-prefixed messages until one carries the query's ID.
func (d *dnsExchange) readTCP() error {
	cv := &d.cv
	for {
		if err := cv.FirstByte(); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: %w", errNoReply, err)
			}
			return err
		}
		var size [2]byte
		if _, err := io.ReadFull(cv.BR, size[:]); err != nil {
			return d.cut(size[:1], err)
		}
		msg := make([]byte, binary.BigEndian.Uint16(size[:]))
		if n, err := io.ReadFull(cv.BR, msg); err != nil {
			return d.cut(append(size[:], msg[:n]...), err)
		}
		if d.other(msg) {
			continue
		}
		return d.read(msg)
	}
}

// cut is a TCP stream that ended inside a message: what came is quoted
// (not DNS); a read the window cut is the window's.
func (d *dnsExchange) cut(seen []byte, err error) error {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	d.seen = dnswire.QuoteSeen(seen) + ", then closed the connection inside a DNS message"
	d.cv.Done()
	return nil
}

// other says msg is a DNS reply to another query (one that timed out,
// with another ID): skipped, as miekg/dns skips it. What does not parse
// is not skipped: it is no DNS.
func (d *dnsExchange) other(msg []byte) bool {
	id, ok := dnswire.ID(msg)
	if !ok || id == d.id {
		return false
	}
	_, err := dnswire.Parse(msg)
	return err == nil
}

// read takes the reply: parsed, or quoted when it is not DNS.
func (d *dnsExchange) read(msg []byte) error {
	defer d.cv.Done()
	r, err := dnswire.Parse(msg)
	switch {
	case err != nil:
		d.seen = dnswire.QuoteSeen(msg) + ", which is not a DNS message"
	case !r.Response:
		d.seen = "a DNS message that is no reply (QR not set)"
	default:
		d.reply = r
	}
	return nil
}

func (d *dnsExchange) Describe(err error, _ time.Time, res *result.Result, obs *classify.Observation, f *classify.Facts) {
	q := d.q
	a := &dnswire.Answer{Question: q.Question(), Transport: "udp", SOA: q.Type == dnsmessage.TypeSOA,
		Resolve: res.Timings.Of(result.PhaseDNS).Seconds(), Connect: res.Timings.Of(result.PhaseConnect).Seconds(), Request: res.Timings.Of(result.PhaseTTFB).Seconds()}
	if q.TCP {
		a.Transport = "tcp"
	}
	want := make([]string, len(q.Rcodes))
	for i, r := range q.Rcodes {
		want[i] = dnswire.RcodeName(r)
	}
	a.Want = dnswire.RcodeList(want)
	obs.Answer = a
	if err != nil || (d.reply == nil && d.seen == "") {
		return
	}
	red := d.cv.P.Opts.Redactor.String
	a.Read = true
	if d.seen != "" {
		a.NotDNS, a.Seen = true, red(d.seen)
		return
	}
	r := d.reply
	a.Rcode, a.Truncated = dnswire.RcodeName(r.Rcode), r.Truncated
	for _, ok := range q.Rcodes {
		a.RcodeOK = a.RcodeOK || ok == r.Rcode
	}
	if r.HasSerial {
		s := r.Serial
		a.Serial = &s
	}
	for i := range dnswire.Sections {
		if a.RcodeOK && a.Failed == "" {
			a.Failed = q.Validators[i].Check(dnswire.Sections[i], r.Sections[i])
		}
		for j := range r.Sections[i] {
			r.Sections[i][j] = red(r.Sections[i][j])
		}
	}
	for i := range r.Sections {
		if r.Sections[i] == nil {
			r.Sections[i] = []string{}
		}
	}
	a.Answer, a.Authority, a.Additional = r.Sections[0], r.Sections[1], r.Sections[2]
	if a.Failed != "" {
		f.Condition = red(strings.ReplaceAll(a.Failed, `\t`, " "))
	}
}
