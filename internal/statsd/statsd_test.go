package statsd

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
)

func TestCountSendsLines(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	c, err := New(pc.LocalAddr().String(), "dserve.health", Options{})
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

// TestDNSServerResolvesTheHost: with a DNS server given (--dns-server),
// the StatsD host is resolved there, not by the system resolver (which
// cannot know app.invalid).
func TestDNSServerResolvesTheHost(t *testing.T) {
	dns, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	port := pc.LocalAddr().(*net.UDPAddr).Port
	var logged []string
	var mu sync.Mutex
	logf := func(f string, a ...any) { mu.Lock(); logged = append(logged, fmt.Sprintf(f, a...)); mu.Unlock() }
	c, err := New(fmt.Sprintf("app.invalid:%d", port), "", Options{DNSServer: dns.Addr, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	c.Count("probe.started")
	c.Close(5 * time.Second)
	buf := make([]byte, 512)
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := pc.ReadFrom(buf)
	mu.Lock()
	defer mu.Unlock()
	if err != nil || strings.TrimSpace(string(buf[:n])) != "probe.started:1|c" {
		t.Fatalf("read %q, %v (client log %q)", buf[:n], err, logged)
	}
}

// TestCountAndCloseNeverBlockOnASilentResolver: the StatsD host's DNS server
// never answers. Count must return at once and Close within its flush
// bound, however long the lookup hangs: a client that resolved or dialled
// in Count or New would take the resolver's whole timeout here.
func TestCountAndCloseNeverBlockOnASilentResolver(t *testing.T) {
	dns, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c, err := New("silent.invalid:8125", "", Options{DNSServer: dns.Addr})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		c.Count("probe.started")
	}
	// Generous bounds for a loaded machine; a blocking client takes the
	// lookup's timeout (seconds) at least.
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("New and 100 Counts took %v", d)
	}
	const flush = 200 * time.Millisecond
	closeStart := time.Now()
	c.Close(flush)
	if d := time.Since(closeStart); d > flush+300*time.Millisecond {
		t.Errorf("Close took %v, want about %v", d, flush)
	}
	select {
	case <-c.done:
	case <-time.After(2 * time.Second):
		t.Errorf("the sender still runs 2s after Close: the abandoned lookup was not cancelled")
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
