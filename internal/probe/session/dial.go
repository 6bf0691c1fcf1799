package session

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/eyeballs"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/writebehind"
	"github.com/healthctl/healthctl/internal/resolve"
)

// dialState is what the dialler learnt: the address dialled, the DNS
// answer, and every attempt of the last connect. Guarded by run.mu.
type dialState struct {
	// dns is the resolver of the probe's lookups.
	DNS       resolve.Client
	Address   string
	Family    int
	dnsAnswer classify.DNSAnswer
	// resolverErr is the first error that said a DNS server could not be
	// reached (refused, no route).
	resolverErr error
	// Attempts are the dial attempts of the last connect, in the order
	// they started.
	Attempts []result.DialAttempt
	// dialErr is the last connect's error when an address answered for
	// itself (refused, unreachable) and none connected: it is the probe's
	// answer even when the connect window closed on another address.
	dialErr error
	// dialing counts the dials running; dialIdle is signalled (with mu)
	// when it drops to 0, so the result waits for a dial cut short.
	dialing  int
	dialIdle sync.Cond
	// conns are the connections the dialler made; they are closed when
	// the probe's context ends (a window, --max-time, the caller's
	// cancellation), so no read or write of the exchange can outlive it:
	// net/http's own deadlines do not cover a 101's raw stream, nor an
	// HTTP/2 stream blocked on flow control or on a full TCP buffer.
	conns     []net.Conn
	connsDone bool
	// connsBuf holds the one connection of most probes (conns starts in
	// it), attemptsBuf their one dial attempt (attempts starts in it), and
	// addrsBuf the addresses of an IP literal, localhost or a short
	// --resolve list (dialHost's, one dial at a time).
	connsBuf    [1]net.Conn
	attemptsBuf [1]result.DialAttempt
	addrsBuf    [2]netip.Addr
}

// KeepConn records a connection the dialler made (p.Mu held); once the
// probe's context has ended it is closed at once.
func (p *Probe) KeepConn(c net.Conn) {
	if p.connsDone {
		c.Close()
		return
	}
	p.conns = append(p.conns, c)
}

// closeConns closes every connection the dialler made and every one it
// will make from now on (p.Mu not held): the probe's context has ended.
func (p *Probe) closeConns() {
	p.Mu.Lock()
	cs := p.conns
	p.conns, p.connsDone = nil, true
	p.Mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}

// beginDial counts a dial in (p.Mu held) and gives its deadline, the
// connect window's; false when the probe has stopped: no dial begins.
func (p *Probe) beginDial() (deadline time.Time, ok bool) {
	if p.Stopped {
		return time.Time{}, false
	}
	p.dialing++
	p.dialErr = nil
	return p.ConnDeadline, true
}

// UseProxy is the proxy of a request to u (the options' proxy rule, nil for
// none), noted on the run with what also, when given, notes of it under the
// same lock: a proxy's credentials are secrets like the target's.
func (p *Probe) UseProxy(u *url.URL, also func(pu *url.URL)) (*url.URL, error) {
	o := p.Opts
	var pu *url.URL
	var err error
	if o.Proxy != nil {
		pu, err = o.Proxy(u)
	}
	o.Redactor.AddURL(pu)
	p.Mu.Lock()
	p.Proxied, p.ProxyURL = pu != nil, pu
	if also != nil {
		also(pu)
	}
	p.Mu.Unlock()
	return pu, err
}

// Dial resolves and connects, recording the dns and connect phases. The
// address families race as RFC 8305 describes: the first family's addresses
// are tried in turn, and the other family's start FallbackDelay later, or at
// once when the first family has run out. The error reported is the one of
// the first address in the list (its address and family are the result's),
// and every failed address is kept for -v.
func (p *Probe) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	return p.DialHost(ctx, host, port)
}

// DialHost is dial of host and port given apart (the HTTP/1.1 exchange's: no
// address text joined only to be split again).
func (p *Probe) DialHost(ctx context.Context, host, port string) (c net.Conn, err error) {
	o := p.Opts
	// The connect window is the dial's context deadline: every attempt
	// (and the lookup) ends when it closes, whatever the timer does.
	p.Mu.Lock()
	deadline, ok := p.beginDial()
	if !ok {
		p.Mu.Unlock()
		return nil, context.Canceled
	}
	// The addresses go in the run's own buffer when no other dial of
	// the probe is running (none reads them once its dial is done).
	var buf []netip.Addr
	if p.dialing == 1 {
		buf = p.addrsBuf[:0]
	}
	p.Mu.Unlock()
	defer func() { p.dialDone(deadline, err) }()
	if !deadline.IsZero() {
		// The connect window's timer cancels ctx when it closes; its
		// deadline bounds the lookup's queries and the connects even
		// before that.
		d := NewDeadlined(ctx, deadline)
		ctx = &d
	}
	addrs, err := p.Addresses(ctx, host, port, buf)
	if err != nil {
		return nil, err
	}
	// A window that closed while the lookup was answered ends the probe
	// here: no connect stage begins. (Windows cancel under p.Mu, so the
	// check and the stage change are one step.)
	// The window's mark is checked, not only ctx: the context net/http
	// hands the dialer may learn of the cancellation a moment later.
	p.Mu.Lock()
	if err := ctx.Err(); err != nil || p.windowStage != "" {
		p.Mu.Unlock()
		if err == nil {
			err = context.Canceled
		}
		return nil, err
	}
	t0 := time.Now()
	p.EnterAt(classify.StageConnect, t0)
	p.Mu.Unlock()
	c, err = p.race(ctx, addrs, port)
	p.Mu.Lock()
	if err == nil && BodyLen(o) > 0 {
		// The request body's write must never hold up the reading of
		// the answer, on either exchange (writeBehind). It is the
		// connection kept for closing: its Close wakes a body reader
		// waiting on it.
		p.Wb = writebehind.New(c)
		c = p.Wb
	}
	if err == nil {
		p.KeepConn(c)
	}
	p.Record(result.PhaseConnect, time.Since(t0))
	if err == nil && p.Proxied {
		// Connected to the proxy: now it must open the way (CONNECT) or
		// answer the request.
		p.Enter(classify.StageProxy)
	}
	p.Mu.Unlock()
	return c, err
}

// dialDone ends a dial that began with the connect window closing at
// deadline and ended with err (p.Mu not held).
func (p *Probe) dialDone(deadline time.Time, err error) {
	p.Mu.Lock()
	if err != nil && p.dialErr == nil && !deadline.IsZero() && !time.Now().Before(deadline) && !p.Stopped && p.ConnWin.Active {
		// The window's deadline ended the lookup or every attempt
		// before its timer fired: close the window now, as the
		// timer would (unless it closed a host's attempt of several,
		// which disarms it).
		p.closeWindow(&p.ConnWin)
	}
	if p.dialing--; p.dialing == 0 {
		p.dialIdle.Broadcast()
	}
	p.Mu.Unlock()
}

// DialUnix connects to the Unix socket at path (postgres://?host=/DIR,
// unix:///PATH) in the connect window: no lookup and no address race, the
// connect stage and phase as for TCP, the path as the address. A socket
// that is not there, or that nothing listens on, answers for itself
// (dialErr), as a refused port does.
func (p *Probe) DialUnix(ctx context.Context, path string) (c net.Conn, err error) {
	p.Mu.Lock()
	deadline, ok := p.beginDial()
	if !ok {
		p.Mu.Unlock()
		return nil, context.Canceled
	}
	t0 := time.Now()
	p.EnterAt(classify.StageConnect, t0)
	p.Address, p.Family = path, 0
	p.Mu.Unlock()
	defer func() { p.dialDone(deadline, err) }()
	if !deadline.IsZero() {
		d := NewDeadlined(ctx, deadline)
		ctx = &d
	}
	var d net.Dialer
	c, err = d.DialContext(ctx, "unix", path)
	p.Mu.Lock()
	defer p.Mu.Unlock()
	took := time.Since(t0)
	p.Record(result.PhaseConnect, took)
	da := result.DialAttempt{Address: path, Duration: took, MS: float64(took.Microseconds()) / 1000}
	switch {
	case err == nil:
		p.KeepConn(c)
	case ctx.Err() != nil:
		da.Error = "no answer within " + p.ConnWin.Err().Error()
	default:
		da.Error = err.Error()
		if errors.Is(err, syscall.ENOENT) {
			err = noSocketError{err}
		}
		p.dialErr = err
	}
	p.Attempts = append(p.Attempts[:0], da)
	return c, err
}

// noSocketError is a Unix socket that is not there: nothing listens, as
// for a refused port (conn_refused), its own words kept.
type noSocketError struct{ error }

func (e noSocketError) Unwrap() error { return e.error }

func (noSocketError) Is(target error) bool { return target == syscall.ECONNREFUSED }

// Addresses are the addresses to dial for host: --resolve's, a literal's,
// or the lookup's (the DNS stage and phase), of the family asked for. Fixed
// addresses go in buf (nil: a slice of their own).
func (p *Probe) Addresses(ctx context.Context, host, port string, buf []netip.Addr) ([]netip.Addr, error) {
	o := p.Opts
	addrs, fixed := FixedAddrs(o, host, port, buf)
	if !fixed {
		p.SetStage(classify.StageDNS)
		t0 := time.Now()
		var err error
		addrs, err = p.lookup(ctx, host)
		p.Mu.Lock()
		p.Record(result.PhaseDNS, time.Since(t0))
		p.Mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	addrs = OfFamily(o, addrs)
	if len(addrs) == 0 {
		if !fixed {
			return nil, p.noAddress(host)
		}
		p.SetStage(classify.StageConnect)
		return nil, &net.AddrError{Err: "no address of the family asked for (-4/-6)", Addr: host}
	}
	return addrs, nil
}

// race connects to addrs through eyeballs.Race (RFC 8305), within the
// connect window (ctx's deadline), and keeps every attempt in p.attempts
// with its address, error and duration. When every attempt failed, the
// error returned is that of the first address (in the order tried) that
// failed for a reason of its own: a refusal beats an address that only ran
// out of time.
func (p *Probe) race(ctx context.Context, addrs []netip.Addr, port string) (net.Conn, error) {
	r := eyeballs.Race(ctx, addrs, port, func(addr string, fam int) {
		p.Mu.Lock()
		p.Address, p.Family = addr, fam
		p.Mu.Unlock()
	})
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.Attempts = p.Attempts[:0]
	for i, a := range r.Attempts {
		da := result.DialAttempt{Address: a.Addr, Duration: a.Took, MS: float64(a.Took.Microseconds()) / 1000}
		switch {
		case r.Won && i == r.Pick:
		case r.Won && errors.Is(a.Err, context.Canceled):
			da.Error = "abandoned: another address connected first"
		case eyeballs.OutOfTime(a.Err):
			da.Error = "no answer within " + p.ConnWin.Err().Error()
		default:
			da.Error = a.Err.Error()
		}
		p.Attempts = append(p.Attempts, da)
	}
	if r.Pick < 0 {
		return nil, context.Cause(ctx)
	}
	pick := r.Attempts[r.Pick]
	p.Address, p.Family = pick.Addr, pick.Family
	p.dialErr = nil
	if r.Answered {
		// An answer of its own (refused, unreachable): it is the probe's
		// answer even if the window closed on another address.
		p.dialErr = pick.Err
	}
	return r.Conn, pick.Err
}
