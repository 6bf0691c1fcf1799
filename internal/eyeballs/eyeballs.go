// Package eyeballs connects to the first of a name's addresses that
// answers, racing them as RFC 8305 ("Happy Eyeballs") describes. It knows
// nothing of probes: the caller resolves the name, bounds the race with
// its context, and reads every attempt from the result.
package eyeballs

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/healthctl/healthctl/internal/crash"
)

// AttemptDelay is RFC 8305's Connection Attempt Delay: how long one
// connection attempt runs alone before the next address is tried too (the
// RFC recommends 250 ms; an attempt that fails starts the next at once).
const AttemptDelay = 250 * time.Millisecond

// Attempt is one address tried: how it ended and how long it took.
type Attempt struct {
	Addr   string // host:port
	Family int    // 4 or 6
	Err    error  // nil for the attempt that connected
	Took   time.Duration
}

// Result is how a race ended.
type Result struct {
	// Conn is the winner's connection, nil when none connected.
	Conn net.Conn
	// Attempts are the attempts started, in the order they started.
	Attempts []Attempt
	// Pick is the index in Attempts of the winner; when none connected,
	// of the first attempt that failed for a reason of its own (refused,
	// unreachable), else of the first attempt; -1 when none started.
	Pick int
	// Answered says Attempts[Pick] failed for a reason of its own: it is
	// the answer even if the time ran out on another address.
	Answered bool
	// Won says Attempts[Pick] connected.
	Won bool
}

// Race connects to addrs on port: interleaved by family (the first
// address's family first), one attempt started every AttemptDelay, or at
// once when every attempt running has failed. Each attempt runs until it
// connects, fails, or ctx ends, so a black-holed address never holds up
// the addresses after it. The first connection wins; the others are
// abandoned (their error is context.Canceled) and closed. first is called
// with the first address as its attempt starts.
func Race(ctx context.Context, addrs []netip.Addr, port string, first func(addr string, family int)) Result {
	if len(addrs) == 1 {
		return one(ctx, addrs[0], port, first)
	}
	addrs = interleave(addrs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan dialed, len(addrs))
	target := func(i int) string { return net.JoinHostPort(addrs[i].Unmap().String(), port) }
	next, running := 0, 0
	start := func() {
		i := next
		if i == 0 && first != nil {
			first(target(0), Family(addrs[0]))
		}
		next++
		running++
		crash.Go(func() {
			t0 := time.Now()
			c, err := dial(ctx, addrs[i], port, target(i))
			results <- dialed{index: i, conn: c, err: err, took: time.Since(t0)}
		})
	}

	done := make([]*dialed, len(addrs))
	won := -1
	timer := time.NewTimer(AttemptDelay)
	defer timer.Stop()
	start()
	for running > 0 {
		var r dialed
		select {
		case r = <-results:
		case <-timer.C:
			if next < len(addrs) && won < 0 && live(ctx) {
				start()
				timer.Reset(AttemptDelay)
			}
			continue
		}
		running--
		done[r.index] = &r
		if r.err == nil && won < 0 {
			won = r.index
			cancel() // the attempts still running end now
			continue
		}
		if r.conn != nil {
			r.conn.Close()
		}
		if won < 0 && running == 0 && next < len(addrs) && live(ctx) {
			// Every attempt so far failed: the next one need not wait.
			start()
			timer.Reset(AttemptDelay)
		}
	}

	return outcome(done, won, func(i int) Attempt {
		return Attempt{Addr: target(i), Family: Family(addrs[i]), Err: done[i].err, Took: done[i].took}
	})
}

// dialed is how one attempt of a race ended.
type dialed struct {
	index int
	conn  net.Conn
	err   error
	took  time.Duration
}

// outcome is a race's result from how each attempt ended (nil for an
// address never tried), in the order of the addresses, and the index of
// the one that connected (-1 for none); attempt describes the i-th.
func outcome(done []*dialed, won int, attempt func(i int) Attempt) Result {
	res := Result{Pick: -1}
	for i, r := range done {
		if r == nil {
			continue
		}
		if i == won {
			res.Pick, res.Won, res.Conn = len(res.Attempts), true, r.conn
		} else if res.Pick < 0 && won < 0 && !OutOfTime(r.err) {
			res.Pick, res.Answered = len(res.Attempts), true
		}
		res.Attempts = append(res.Attempts, attempt(i))
	}
	if res.Pick < 0 && done[0] != nil {
		// Nothing but the time: it ran out on every address.
		res.Pick = 0
	}
	return res
}

// one is the race of a single address (an IP URL, a name with one
// address): the same result, dialled on the caller's goroutine, without
// the race's goroutine, channel and timer — most of a sweep's targets.
func one(ctx context.Context, addr netip.Addr, port string, first func(addr string, family int)) Result {
	target, fam := net.JoinHostPort(addr.Unmap().String(), port), Family(addr)
	if first != nil {
		first(target, fam)
	}
	t0 := time.Now()
	c, err := dial(ctx, addr, port, target)
	res := Result{Conn: c, Pick: 0, Attempts: []Attempt{{Addr: target, Family: fam, Err: err, Took: time.Since(t0)}}}
	if err == nil {
		res.Won = true
		return res
	}
	if c != nil {
		c.Close()
		res.Conn = nil
	}
	res.Answered = !OutOfTime(err)
	return res
}

// dial connects to one address with net's dialer: its deadline, its
// errors, its TCP_NODELAY (a dial written beside it was faster but skipped
// the connect deadline: docs/benchmarks.md, "Fast paths").
func dial(ctx context.Context, addr netip.Addr, port, target string) (net.Conn, error) {
	d := net.Dialer{KeepAlive: -1}
	return d.DialContext(ctx, network(addr), target)
}

// interleave orders addresses as RFC 8305 §4 asks: the first address's
// family, then the other, alternating, each family in its own order.
func interleave(addrs []netip.Addr) []netip.Addr {
	first := Family(addrs[0])
	var a, b []netip.Addr
	for _, x := range addrs {
		if Family(x) == first {
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

// live says ctx has neither ended nor passed its deadline: a context may
// report a deadline that a timer elsewhere enforces, a moment late.
func live(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	d, ok := ctx.Deadline()
	return !ok || time.Now().Before(d)
}

// OutOfTime says a dial attempt ended because its time ran out (its
// deadline passed, or its context was cancelled), not because the address
// answered.
func OutOfTime(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Family is 4 for an IPv4 (or IPv4-mapped) address, else 6.
func Family(a netip.Addr) int {
	if a.Unmap().Is4() {
		return 4
	}
	return 6
}

func network(a netip.Addr) string {
	if Family(a) == 4 {
		return "tcp4"
	}
	return "tcp6"
}
