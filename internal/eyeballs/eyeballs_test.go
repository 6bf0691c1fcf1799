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
