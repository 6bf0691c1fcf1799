package probe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/crash"
)

// FallbackDelay is how long the first address family gets before the other
// family is tried too (RFC 8305's "Connection Attempt Delay", as Go's and
// curl's dialers use).
const FallbackDelay = 300 * time.Millisecond

// DialAttempt is one address tried and why it failed.
type DialAttempt struct {
	Address string `json:"address"`
	Error   string `json:"error"`
}

// dial resolves and connects, recording the dns and connect phases. The
// address families race as RFC 8305 describes: the first family's addresses
// are tried in turn, and the other family's start FallbackDelay later, or at
// once when the first family has run out. The error reported is the one of
// the first address in the list (its address and family are the result's),
// and every failed address is kept for -v.
func (p *run) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	o := p.opts
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	looked := false
	if a, ok := o.Resolve[strings.ToLower(host)+":"+port]; ok {
		addrs = []netip.Addr{netip.MustParseAddr(a)}
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
	c, err := p.race(ctx, addrs, port)
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
}

// race connects to the first address that answers (see dial).
func (p *run) race(ctx context.Context, addrs []netip.Addr, port string) (net.Conn, error) {
	first := family(addrs[0])
	var primary, fallback []int
	for i, a := range addrs {
		if family(a) == first {
			primary = append(primary, i)
		} else {
			fallback = append(fallback, i)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan dialed, len(addrs))
	var wg sync.WaitGroup
	d := net.Dialer{KeepAlive: -1}
	chain := func(list []int, wait <-chan struct{}) {
		defer crash.Recover()
		defer wg.Done()
		if wait != nil {
			select {
			case <-wait:
			case <-ctx.Done():
				return
			}
		}
		for _, i := range list {
			if ctx.Err() != nil {
				return
			}
			a := addrs[i]
			target := net.JoinHostPort(a.Unmap().String(), port)
			p.mu.Lock()
			if p.address == "" || p.stage == classify.StageConnect {
				p.address, p.family = target, family(a)
			}
			p.mu.Unlock()
			c, err := d.DialContext(ctx, dialNetwork(a), target)
			results <- dialed{index: i, addr: target, fam: family(a), conn: c, err: err}
			if err == nil {
				return
			}
		}
	}
	startFallback := make(chan struct{})
	var once sync.Once
	goFallback := func() { once.Do(func() { close(startFallback) }) }
	timer := time.AfterFunc(FallbackDelay, goFallback)
	defer timer.Stop()
	wg.Add(2)
	go chain(primary, nil)
	go chain(fallback, startFallback)
	go func() {
		defer crash.Recover()
		wg.Wait()
		close(results)
	}()

	primaryLeft := len(primary)
	var failed []dialed
	for r := range results {
		if r.err == nil {
			cancel()
			p.mu.Lock()
			p.address, p.family = r.addr, r.fam
			p.attempts = nil
			p.mu.Unlock()
			go func() {
				defer crash.Recover()
				for late := range results {
					if late.conn != nil {
						late.conn.Close()
					}
				}
			}()
			return r.conn, nil
		}
		failed = append(failed, r)
		if family(addrs[r.index]) == first {
			if primaryLeft--; primaryLeft == 0 {
				goFallback()
			}
		}
	}
	if len(failed) == 0 {
		// The window closed before any address was tried.
		return nil, context.Cause(ctx)
	}
	// Every address failed: report the first one in the list that failed
	// for a reason of its own (not because the window closed).
	slices.SortFunc(failed, func(a, b dialed) int { return a.index - b.index })
	pick := failed[0]
	for _, f := range failed {
		if !errors.Is(f.err, context.Canceled) && !errors.Is(f.err, context.DeadlineExceeded) {
			pick = f
			break
		}
	}
	p.mu.Lock()
	p.address, p.family = pick.addr, pick.fam
	p.attempts = p.attempts[:0]
	for _, f := range failed {
		p.attempts = append(p.attempts, DialAttempt{Address: f.addr, Error: f.err.Error()})
	}
	p.mu.Unlock()
	return nil, pick.err
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
