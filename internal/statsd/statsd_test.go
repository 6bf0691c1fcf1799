package statsd

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCountSendsLines(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	c, err := New(pc.LocalAddr().String(), "dserve.health", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Count("probe.started")
	c.Count("probe.fail_open")
	c.Close(time.Second)
	var got []string
	buf := make([]byte, 512)
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(got) < 2 {
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, strings.TrimSpace(string(buf[:n])))
	}
	want := []string{"dserve.health.probe.started:1|c", "dserve.health.probe.fail_open:1|c"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCountNeverBlocks(t *testing.T) {
	// Nothing listens on a reserved loopback port: writes may fail (ICMP
	// port unreachable); Count and Close still return at once.
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	c, err := New(addr, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 100 {
		c.Count("probe.started")
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("Count took %v", d)
	}
	c.Close(FlushTimeout)
	if d := time.Since(start); d > FlushTimeout+200*time.Millisecond {
		t.Errorf("Close took %v, want at most %v", d, FlushTimeout)
	}
}

func TestParse(t *testing.T) {
	for _, bad := range []string{"", "host", ":8125", "host:0", "host:99999", "host:x"} {
		if ParseAddr(bad) == nil {
			t.Errorf("ParseAddr(%q) = nil, want an error", bad)
		}
	}
	for _, good := range []string{"127.0.0.1:8125", "localhost:8125", "[::1]:8125", "statsd.internal:8125"} {
		if err := ParseAddr(good); err != nil {
			t.Errorf("ParseAddr(%q) = %v", good, err)
		}
	}
	for _, bad := range []string{"a:b", "a|b", "a b", "a@b"} {
		if ParsePrefix(bad) == nil {
			t.Errorf("ParsePrefix(%q) = nil, want an error", bad)
		}
	}
}
