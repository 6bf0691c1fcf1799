package probe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/crash"
)

// AttemptDelay is RFC 8305's Connection Attempt Delay: how long one
// connection attempt runs alone before the next address is tried too (the
// RFC recommends 250 ms; an attempt that fails starts the next at once).
const AttemptDelay = 250 * time.Millisecond

// dialState is what the dialler learnt: the address dialled, the DNS
// answer, and every attempt of the last connect. Guarded by run.mu.
type dialState struct {
	address   string
	family    int
	dnsAnswer classify.DNSAnswer
	// resolverErr is the first error that said a DNS server could not be
	// reached (refused, no route).
	resolverErr error
	// attempts are the dial attempts of the last connect, in the order
	// they started.
	attempts []DialAttempt
	// dialErr is the last connect's error when an address answered for
	// itself (refused, unreachable) and none connected: it is the probe's
	// answer even when the connect window closed on another address.
	dialErr error
	// dialing counts the dials running; dialIdle is signalled (with mu)
	// when it drops to 0, so the result waits for a dial cut short.
	dialing  int
	dialIdle *sync.Cond
}

// DialAttempt is one address tried: how it ended and how long it took.
// Error is empty for the attempt that connected.
type DialAttempt struct {
	Address string  `json:"address"`
	Error   string  `json:"error,omitempty"`
	MS      float64 `json:"ms"`
	// Duration is MS as a duration (for -v).
	Duration time.Duration `json:"-"`
}

// dial resolves and connects, recording the dns and connect phases. The
// address families race as RFC 8305 describes: the first family's addresses
// are tried in turn, and the other family's start FallbackDelay later, or at
// once when the first family has run out. The error reported is the one of
// the first address in the list (its address and family are the result's),
// and every failed address is kept for -v.
func (p *run) dial(ctx context.Context, network, addr string) (c net.Conn, err error) {
	o := p.opts
	// The connect window is the dial's context deadline: every attempt
	// (and the lookup) ends when it closes, whatever the timer does.
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil, context.Canceled
	}
	p.dialing++
	p.dialErr = nil
	deadline := p.connDeadline
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if err != nil && p.dialErr == nil && !deadline.IsZero() && !time.Now().Before(deadline) && !p.stopped {
			// The window's deadline ended the lookup or every attempt
			// before its timer fired: close the window now, as the
			// timer would.
			p.noteWindow()
			p.cancel(p.connWin.err)
		}
		if p.dialing--; p.dialing == 0 {
			p.dialIdle.Broadcast()
		}
		p.mu.Unlock()
	}()
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	looked := false
	if as, ok := o.Resolve[strings.ToLower(host)+":"+port]; ok {
		for _, a := range as {
			addrs = append(addrs, netip.MustParseAddr(a))
		}
	} else if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		looked = true
		p.setStage(classify.StageDNS)
		t0 := time.Now()
		addrs, err = p.lookup(ctx, host)
		p.mu.Lock()
		p.record(PhaseDNS, time.Since(t0))
		p.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	addrs = slices.DeleteFunc(addrs, func(a netip.Addr) bool {
		return (o.Network == "tcp4" && family(a) != 4) || (o.Network == "tcp6" && family(a) != 6)
	})
	if len(addrs) == 0 {
		if looked {
			return nil, p.noAddress(host)
		}
		p.setStage(classify.StageConnect)
		return nil, &net.AddrError{Err: "no address of the family asked for (-4/-6)", Addr: host}
	}
	// A window that closed while the lookup was answered ends the probe
	// here: no connect stage begins. (Windows cancel under p.mu, so the
	// check and the stage change are one step.)
	// The window's mark is checked, not only ctx: the context net/http
	// hands the dialer may learn of the cancellation a moment later.
	p.mu.Lock()
	if err := ctx.Err(); err != nil || p.windowStage != "" {
		p.mu.Unlock()
		if err == nil {
			err = context.Canceled
		}
		return nil, err
	}
	p.enter(classify.StageConnect)
	p.mu.Unlock()
	t0 := time.Now()
	c, err = p.race(ctx, addrs, port)
	p.mu.Lock()
	p.record(PhaseConnect, time.Since(t0))
	if err == nil && p.proxied {
		// Connected to the proxy: now it must open the way (CONNECT) or
		// answer the request.
		p.enter(classify.StageProxy)
	}
	p.mu.Unlock()
	return c, err
}

// noAddress is the error for a name that resolved, but not to the family
// asked for (-4/-6): the name exists and has no address of that kind.
func (p *run) noAddress(host string) error {
	kind := "A"
	if p.opts.Network == "tcp6" {
		kind = "AAAA"
	}
	p.mu.Lock()
	p.dnsAnswer = classify.DNSNoRecords
	p.mu.Unlock()
	return &net.DNSError{Err: "no " + kind + " record for the name (it exists)", Name: host, IsNotFound: true}
}

type dialed struct {
	index int
	addr  string
	fam   int
	conn  net.Conn
	err   error
	took  time.Duration
}

// race connects as RFC 8305 §4-5 describes: the addresses interleaved by
// family (the first address's family first), one attempt started every
// AttemptDelay, or at once when every attempt running has failed. Each
// attempt runs until it connects, fails, or the connect window (ctx's
// deadline) closes, so a black-holed address never holds up the addresses
// after it. The first connection wins and the others are closed.
//
// When every attempt failed, the error returned is that of the first
// address (in the order tried) that failed for a reason of its own: a
// refusal beats an address that only ran out of time. Every attempt is
// kept in p.attempts with its address, error and duration.
func (p *run) race(ctx context.Context, addrs []netip.Addr, port string) (net.Conn, error) {
	addrs = interleave(addrs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan dialed, len(addrs))
	d := net.Dialer{KeepAlive: -1}
	starts := make([]time.Time, len(addrs))
	start := func(i int) {
		a := addrs[i]
		target := net.JoinHostPort(a.Unmap().String(), port)
		starts[i] = time.Now()
		if i == 0 {
			p.mu.Lock()
			p.address, p.family = target, family(a)
			p.mu.Unlock()
		}
		go func() {
			defer crash.Recover()
			t0 := time.Now()
			c, err := d.DialContext(ctx, dialNetwork(a), target)
			results <- dialed{index: i, addr: target, fam: family(a), conn: c, err: err, took: time.Since(t0)}
		}()
	}

	next, running := 0, 0
	done := make([]*dialed, len(addrs))
	var won *dialed
	timer := time.NewTimer(AttemptDelay)
	defer timer.Stop()
	start(next)
	next++
	running++
	for running > 0 {
		var r dialed
		select {
		case r = <-results:
		case <-timer.C:
			if next < len(addrs) && won == nil && ctx.Err() == nil {
				start(next)
				next++
				running++
				timer.Reset(AttemptDelay)
			}
			continue
		}
		running--
		done[r.index] = &r
		if r.err == nil && won == nil {
			won = done[r.index]
			cancel() // the attempts still running end now
			continue
		}
		if r.conn != nil {
			r.conn.Close()
		}
		if won == nil && running == 0 && next < len(addrs) && ctx.Err() == nil {
			// Every attempt so far failed: the next one need not wait.
			start(next)
			next++
			running++
			timer.Reset(AttemptDelay)
		}
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	p.attempts = p.attempts[:0]
	for _, r := range done {
		if r == nil {
			continue
		}
		a := DialAttempt{Address: r.addr, Duration: r.took}
		a.MS = float64(r.took.Microseconds()) / 1000
		switch {
		case r == won:
		case won != nil && errors.Is(r.err, context.Canceled):
			a.Error = "abandoned: another address connected first"
		case outOfTime(r.err):
			a.Error = "no answer within " + p.connWin.err.Error()
		default:
			a.Error = r.err.Error()
		}
		p.attempts = append(p.attempts, a)
	}
	if won != nil {
		p.address, p.family = won.addr, won.fam
		p.dialErr = nil
		return won.conn, nil
	}
	var pick *dialed
	for _, r := range done {
		if r != nil && !outOfTime(r.err) {
			pick = r
			break
		}
	}
	if pick == nil {
		// Nothing but the window: the time ran out on every address.
		if done[0] != nil {
			pick = done[0]
		} else {
			return nil, context.Cause(ctx)
		}
	} else {
		// An answer of its own (refused, unreachable): it is the
		// probe's answer even if the window closed on another address.
		p.dialErr = pick.err
	}
	p.address, p.family = pick.addr, pick.fam
	return nil, pick.err
}

// interleave orders addresses as RFC 8305 §4 asks: the first address's
// family, then the other, alternating, each family in its own order.
func interleave(addrs []netip.Addr) []netip.Addr {
	first := family(addrs[0])
	var a, b []netip.Addr
	for _, x := range addrs {
		if family(x) == first {
			a = append(a, x)
		} else {
			b = append(b, x)
		}
	}
	out := make([]netip.Addr, 0, len(addrs))
	for i := 0; i < len(a) || i < len(b); i++ {
		if i < len(a) {
			out = append(out, a[i])
		}
		if i < len(b) {
			out = append(out, b[i])
		}
	}
	return out
}

// outOfTime says a dial attempt ended because the window closed (its
// deadline passed, or the probe's context was cancelled), not because the
// address answered.
func outOfTime(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func family(a netip.Addr) int {
	if a.Unmap().Is4() {
		return 4
	}
	return 6
}

func dialNetwork(a netip.Addr) string {
	if family(a) == 4 {
		return "tcp4"
	}
	return "tcp6"
}
