package eyeballs

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

func TestInterleave(t *testing.T) {
	in := []netip.Addr{
		netip.MustParseAddr("::1"), netip.MustParseAddr("::2"), netip.MustParseAddr("127.0.0.1"),
		netip.MustParseAddr("::3"), netip.MustParseAddr("127.0.0.2"),
	}
	want := []string{"::1", "127.0.0.1", "::2", "127.0.0.2", "::3"}
	got := interleave(in)
	for i, a := range got {
		if a.String() != want[i] {
			t.Fatalf("interleave = %v, want %v", got, want)
		}
	}
}

// TestRaceRefusedThenConnects: a refused address starts the next at once
// (not after AttemptDelay), the next connects, and both are reported.
func TestRaceRefusedThenConnects(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	// 127.0.0.2 is loopback too; nothing listens there on this port.
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1")}
	var first string
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r := Race(ctx, addrs, port, func(a string, _ int) { first = a })
	if r.Conn == nil || !r.Won || r.Pick != 1 {
		t.Fatalf("race: %+v, want the second address to win", r)
	}
	r.Conn.Close()
	if first != "127.0.0.2:"+port || len(r.Attempts) != 2 || !errors.Is(r.Attempts[0].Err, syscall.ECONNREFUSED) {
		t.Errorf("first %q, attempts %+v", first, r.Attempts)
	}
	if r.Attempts[0].Took >= AttemptDelay {
		t.Errorf("the refusal took %v", r.Attempts[0].Took)
	}
}

// TestRaceAllRefused: the pick is the first address that answered for
// itself.
func TestRaceAllRefused(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close() // now nothing listens
	r := Race(context.Background(), []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")}, port, nil)
	if r.Conn != nil || r.Won || !r.Answered || r.Pick != 0 || len(r.Attempts) != 2 {
		t.Fatalf("race: %+v", r)
	}
}

// pastDeadline reports a deadline that has passed while nothing has
// cancelled it yet: a timer elsewhere will, a moment late.
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestNoAttemptPastTheDeadline: once the race's deadline has passed, no
// further address is tried, even before the context is cancelled; the
// first attempt (which fails at once: its deadline has passed) is all.
func TestNoAttemptPastTheDeadline(t *testing.T) {
	if live(pastDeadline{context.Background()}) {
		t.Fatal("live past the deadline")
	}
	ctx, cancel := context.WithCancel(context.Background())
	if !live(ctx) {
		t.Fatal("not live before the deadline")
	}
	cancel()
	if live(ctx) {
		t.Fatal("live when cancelled")
	}
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1"), netip.MustParseAddr("127.0.0.2")}
	r := Race(pastDeadline{context.Background()}, addrs, "9", nil)
	if len(r.Attempts) != 1 || r.Won {
		t.Fatalf("attempts %+v, want the first alone, failed", r.Attempts)
	}
}
