package probe_test

import (
	"encoding/binary"
	"net"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/net/icmp"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
	"github.com/healthctl/healthctl/internal/icmpwire"
	"github.com/healthctl/healthctl/internal/probe"
)

// skipNoICMP skips where this process may open no ICMP socket (neither a
// ping socket nor a raw one): TestICMPNotPermitted covers that answer.
func skipNoICMP(t *testing.T, res probe.Result) {
	t.Helper()
	if res.Reason == classify.LocalError && strings.Contains(res.Error, "ping_group_range") {
		t.Skip("no ICMP socket may be opened here (neither a ping socket nor a raw one)")
	}
}

// TestICMPProbe: icmp:// pings the loopback's addresses, named or
// literal, through the run's DNS and its family (-4/-6, Prefer): an echo
// reply passes, with the three phases and the reply's hop limit in the
// answer; a name with no address of the family asked for is the DNS's.
func TestICMPProbe(t *testing.T) {
	dns, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url     string
		network string
		prefer  int
		reason  classify.Reason
		addr    string
	}{
		{"icmp://127.0.0.1", "tcp", 0, classify.OK, "127.0.0.1"},
		{"icmp://127.0.0.1?ttl=5&size=100", "tcp", 0, classify.OK, "127.0.0.1"},
		{"icmp://[::1]", "tcp", 0, classify.OK, "::1"},
		{"icmp://app.invalid", "tcp", 0, classify.OK, "127.0.0.1"},
		{"icmp://dual.invalid", "tcp6", 0, classify.OK, "::1"},
		{"icmp://dual.invalid", "tcp", 4, classify.OK, "127.0.0.1"},
		{"icmp://v6.invalid", "tcp4", 0, classify.DNSNoAddress, ""},
		{"icmp://nothing.invalid", "tcp", 0, classify.DNSNXDomain, ""},
	} {
		o := opts(t, c.url, dns.Addr, nil)
		o.Network, o.Prefer = c.network, c.prefer
		res := probe.Run(t.Context(), o)
		skipNoICMP(t, res)
		if res.Reason != c.reason || res.Address != c.addr {
			t.Errorf("%s (%s, prefer %d): %s %s at %q, want %s at %q", c.url, c.network, c.prefer, res.Reason, res.Error, res.Address, c.reason, c.addr)
			continue
		}
		if c.reason != classify.OK {
			continue
		}
		a, ok := res.Answer.(*icmpwire.Answer)
		if !ok || !a.Echo || a.HopLimit != 64 || a.RTT <= 0 || a.Setup <= 0 {
			t.Errorf("%s: answer %+v", c.url, res.Answer)
		}
		if want := len(icmpwire.Data(0)); strings.Contains(c.url, "size=100") && a.Bytes != 100 || !strings.Contains(c.url, "size=") && a.Bytes != want {
			t.Errorf("%s: %d bytes sent", c.url, a.Bytes)
		}
	}
}

// TestICMPNotPermitted: where neither a ping socket nor a raw one may be
// opened, the probe is this machine's trouble (local_error: unknown,
// never the target's), saying how to allow ping sockets.
func TestICMPNotPermitted(t *testing.T) {
	var tried []string
	o := opts(t, "icmp://127.0.0.1", "", nil)
	o.ICMPSocket = func(network, address string) (*icmp.PacketConn, error) {
		tried = append(tried, network)
		return nil, &net.OpError{Op: "listen", Net: network, Err: syscall.EPERM}
	}
	res := probe.Run(t.Context(), o)
	if res.Outcome != classify.Unknown || res.Reason != classify.LocalError {
		t.Errorf("%s/%s: %s", res.Outcome, res.Reason, res.Error)
	}
	for _, want := range []string{"net.ipv4.ping_group_range", `sysctl -w net.ipv4.ping_group_range="0 2147483647"`, "CAP_NET_RAW"} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("no %q in %q", want, res.Error)
		}
	}
	if a, ok := res.Answer.(*icmpwire.Answer); !ok || !strings.Contains(a.NotPermitted, "ping_group_range") {
		t.Errorf("answer %+v", res.Answer)
	}
	if strings.Join(tried, ",") != "udp4,ip4:icmp" {
		t.Errorf("sockets tried %v, want the ping socket, then a raw one", tried)
	}
}

// rawProto253 is the exchange's socket as a raw socket of IP protocol
// 253 (RFC 3692's experiments) on the loopback: the echo request goes
// out as a datagram of that protocol, which no kernel answers — a host
// that never replies, or (with a fake router on the same protocol) one
// whose router says it is unreachable. Needs root (raw sockets).
func rawProto253(t *testing.T) func(network, address string) (*icmp.PacketConn, error) {
	t.Helper()
	c, err := icmp.ListenPacket("ip4:253", "127.0.0.1")
	if err != nil {
		t.Skipf("no raw socket here: %v", err)
	}
	c.Close()
	return func(network, address string) (*icmp.PacketConn, error) {
		if network != "ip4:icmp" {
			return nil, syscall.EPERM
		}
		return icmp.ListenPacket("ip4:253", "127.0.0.1")
	}
}

// TestICMPNoReply: a host that never replies is the read window's
// timeout, within it.
func TestICMPNoReply(t *testing.T) {
	o := opts(t, "icmp://127.0.0.1", "", nil)
	o.ICMPSocket = rawProto253(t)
	res := probe.Run(t.Context(), o)
	if res.Outcome != classify.Timeout || res.Reason != classify.HeadersTimeout || !strings.Contains(res.Error, "no echo reply") {
		t.Errorf("%s/%s: %s", res.Outcome, res.Reason, res.Error)
	}
}

// TestICMPUnreachable: a destination unreachable that quotes the
// request (from a fake router on the loopback) is host_unreachable or
// net_unreachable, by its code.
func TestICMPUnreachable(t *testing.T) {
	for code, want := range map[byte]classify.Reason{1: classify.HostUnreachable, 0: classify.NetUnreachable} {
		o := opts(t, "icmp://127.0.0.1", "", nil)
		o.ICMPSocket = rawProto253(t)
		router, err := net.ListenPacket("ip4:253", "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			b := make([]byte, 1500)
			for {
				n, _, err := router.ReadFrom(b)
				if err != nil {
					return
				}
				if n < 8 || b[0] != 8 {
					continue // not an echo request (our own answer)
				}
				ip := make([]byte, 20)
				ip[0] = 0x45
				msg := append([]byte{3, code, 0, 0, 0, 0, 0, 0}, ip...)
				msg = append(msg, b[:8]...)
				binary.BigEndian.PutUint16(msg[2:], 0)
				router.WriteTo(msg, &net.IPAddr{IP: net.IPv4(127, 0, 0, 1)})
				return
			}
		}()
		res := probe.Run(t.Context(), o)
		router.Close()
		if res.Outcome != classify.Unreachable || res.Reason != want || !strings.Contains(res.Error, "destination unreachable") {
			t.Errorf("code %d: %s/%s: %s, want %s", code, res.Outcome, res.Reason, res.Error, want)
		}
	}
}
