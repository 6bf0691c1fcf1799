package listen

// prober: icmp — blackbox's ICMP echo, one request and its reply, on a
// Linux ping socket ("udp4"/"udp6": the process's group within
// net.ipv4.ping_group_range) or, failing that, a raw socket (root or
// CAP_NET_RAW). When neither may be opened the module still loads, and
// each probe answers probe_success 0 saying why and how to allow it.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
)

// ICMPSocket opens the socket an echo request goes out on, as
// golang.org/x/net/icmp.ListenPacket: network "udp4"/"udp6" is an
// unprivileged ping socket, "ip4:icmp"/"ip6:ipv6-icmp" a raw one.
type ICMPSocket func(network, address string) (*icmp.PacketConn, error)

// icmpModule is an icmp module's own fields (blackbox's icmp_probe).
type icmpModule struct {
	// prefer is preferred_ip_protocol (4 or 6, default 6), fallback
	// ip_protocol_fallback (default true).
	prefer   int
	fallback bool
	// ttl is the request's TTL (hop limit), 0: the system's.
	ttl int
	// payload is payload_size (0: blackbox's text alone).
	payload int
}

// icmpPayload is what blackbox puts in its echo requests.
const icmpPayload = "Prometheus Blackbox Exporter"

// icmpSection reads an icmp: section; its fields are blackbox's, and a
// field of another prober's is refused as blackbox refuses it.
func (m *Module) icmpSection(sec *yaml.Node, fail failFunc) error {
	m.icmp = icmpModule{prefer: 6, fallback: true}
	if sec == nil {
		return nil
	}
	for i := 0; i+1 < len(sec.Content); i += 2 {
		k, val := sec.Content[i], deref(sec.Content[i+1])
		field := "icmp." + k.Value
		bad := func(format string, args ...any) error { return fail(val.Line, m.Name, field, format, args...) }
		switch k.Value {
		case "preferred_ip_protocol":
			switch val.Value {
			case "ip4":
				m.icmp.prefer = 4
			case "ip6", "":
				m.icmp.prefer = 6
			default:
				return bad("%q: want ip4 or ip6", val.Value)
			}
		case "ip_protocol_fallback":
			b, err := strconv.ParseBool(val.Value)
			if err != nil {
				return bad("%q: want true or false", val.Value)
			}
			m.icmp.fallback = b
		case "ttl":
			n, err := strconv.Atoi(val.Value)
			if err != nil || n < 0 || n > 255 {
				return bad("%q: want a TTL from 0 to 255", val.Value)
			}
			m.icmp.ttl = n
		case "payload_size":
			n, err := strconv.Atoi(val.Value)
			if err != nil || n < 0 || n > 65000 {
				return bad("%q: want a size in bytes (0 to 65000)", val.Value)
			}
			m.icmp.payload = n
		case "dont_fragment":
			b, err := strconv.ParseBool(val.Value)
			if err != nil {
				return bad("%q: want true or false", val.Value)
			}
			if b {
				return bad("true: not supported: \"set the DF-bit in the IP-header. Only works with ip4, on *nix systems and requires raw sockets\": healthctl writes no IP header of its own")
			}
		default:
			if why, ok := refused[k.Value]; ok {
				return fail(k.Line, m.Name, field, "not supported: %s", why)
			}
			return fail(k.Line, m.Name, field, "unknown field (want preferred_ip_protocol, ip_protocol_fallback, ttl, payload_size or dont_fragment)")
		}
	}
	return nil
}

// icmpSeq numbers the echo requests of the process.
var icmpSeq atomic.Uint32

// ping sends one echo request to host within ctx's deadline and waits for
// its reply: the result in probe's terms (outcome, reason, address and
// the resolve and total timings), and the setup and rtt phases and the
// reply's hop limit (-1 without one) the icmp series add. notPermitted
// is the one line that says no ICMP socket may be opened, and how to
// allow one.
func (m *Module) ping(ctx context.Context, host string, open ICMPSocket) (res probe.Result, f icmpFacts) {
	start := time.Now()
	f.hopLimit = -1
	defer func() { res.Timings.Set(probe.PhaseTotal, time.Since(start)) }()
	fail := func(o classify.Outcome, r classify.Reason, err string) {
		res.Outcome, res.Reason, res.Error = o, r, err
	}
	addr, err := m.resolveICMP(ctx, host)
	res.Timings.Set(probe.PhaseDNS, time.Since(start))
	f.resolve = time.Since(start)
	if err != nil {
		var de *net.DNSError
		switch {
		case errors.As(err, &de) && de.IsNotFound:
			fail(classify.DNS, classify.DNSNXDomain, err.Error())
		case errors.As(err, &de) && de.IsTimeout:
			fail(classify.Timeout, classify.DNSTimeout, err.Error())
		case errors.As(err, &de):
			fail(classify.DNS, classify.ResolverError, err.Error())
		default:
			fail(classify.DNS, classify.DNSNoAddress, err.Error())
		}
		return res, f
	}
	res.Address = addr.String()
	res.IPFamily = 6
	if addr.Is4() {
		res.IPFamily = 4
	}
	setup := time.Now()
	conn, privileged, err := openICMP(addr, open)
	if err != nil {
		f.notPermitted = icmpNotPermitted(err)
		fail(classify.Unknown, classify.LocalError, f.notPermitted)
		if f.notPermitted == "" {
			res.Error = "cannot open an ICMP socket: " + err.Error()
		}
		return res, f
	}
	defer conn.Close()
	v4 := addr.Is4()
	if v4 {
		if m.icmp.ttl > 0 {
			conn.IPv4PacketConn().SetTTL(m.icmp.ttl)
		}
		conn.IPv4PacketConn().SetControlMessage(ipv4.FlagTTL, true)
	} else {
		if m.icmp.ttl > 0 {
			conn.IPv6PacketConn().SetHopLimit(m.icmp.ttl)
		}
		conn.IPv6PacketConn().SetControlMessage(ipv6.FlagHopLimit, true)
	}
	data := []byte(icmpPayload)
	if m.icmp.payload > 0 {
		data = make([]byte, m.icmp.payload)
		copy(data, icmpPayload)
	}
	id := os.Getpid() & 0xffff
	seq := int(icmpSeq.Add(1) & 0xffff)
	var reqType, replyType icmp.Type = ipv4.ICMPTypeEcho, ipv4.ICMPTypeEchoReply
	proto := 1
	if !v4 {
		reqType, replyType, proto = ipv6.ICMPTypeEchoRequest, ipv6.ICMPTypeEchoReply, 58
	}
	wb, err := (&icmp.Message{Type: reqType, Body: &icmp.Echo{ID: id, Seq: seq, Data: data}}).Marshal(nil)
	if err != nil {
		fail(classify.Unknown, classify.LocalError, err.Error())
		return res, f
	}
	var dst net.Addr = &net.IPAddr{IP: addr.AsSlice(), Zone: addr.Zone()}
	if !privileged {
		dst = &net.UDPAddr{IP: addr.AsSlice(), Zone: addr.Zone()}
	}
	f.setup = time.Since(setup)
	sent := time.Now()
	if _, err := conn.WriteTo(wb, dst); err != nil {
		fail(classify.Unreachable, classify.HostUnreachable, "sending the echo request: "+err.Error())
		return res, f
	}
	if d, ok := ctx.Deadline(); ok {
		conn.SetReadDeadline(d)
	}
	rb := make([]byte, 1500+len(data))
	for {
		var n int
		var peer net.Addr
		hop := -1
		if v4 {
			var cm *ipv4.ControlMessage
			n, cm, peer, err = conn.IPv4PacketConn().ReadFrom(rb)
			if cm != nil {
				hop = cm.TTL
			}
		} else {
			var cm *ipv6.ControlMessage
			n, cm, peer, err = conn.IPv6PacketConn().ReadFrom(rb)
			if cm != nil {
				hop = cm.HopLimit
			}
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				fail(classify.Timeout, classify.ConnectTimeout, "no echo reply from "+addr.String()+" within the timeout")
			} else {
				fail(classify.Unreachable, classify.HostUnreachable, "reading the echo reply: "+err.Error())
			}
			return res, f
		}
		if peerAddr(peer) != addr.Unmap().WithZone("") {
			continue
		}
		msg, err := icmp.ParseMessage(proto, rb[:n])
		if err != nil || msg.Type != replyType {
			continue
		}
		echo, ok := msg.Body.(*icmp.Echo)
		// A ping socket's ID is the kernel's (and only replies to it
		// come to the socket); a raw socket sees every echo reply.
		if !ok || echo.Seq != seq || privileged && echo.ID != id || string(echo.Data) != string(data) {
			continue
		}
		f.rtt = time.Since(sent)
		f.hopLimit = hop
		res.Outcome, res.Reason = classify.Pass, classify.OK
		return res, f
	}
}

// icmpFacts are what the icmp series add to a probe's result.
type icmpFacts struct {
	resolve, setup, rtt time.Duration
	hopLimit            int
	notPermitted        string
}

// peerAddr is a reply's source address.
func peerAddr(a net.Addr) netip.Addr {
	var ip net.IP
	switch a := a.(type) {
	case *net.UDPAddr:
		ip = a.IP
	case *net.IPAddr:
		ip = a.IP
	}
	p, _ := netip.AddrFromSlice(ip)
	return p.Unmap()
}

// resolveICMP is blackbox's choice of address: the preferred family's
// first, else (with the fallback) the other's.
func (m *Module) resolveICMP(ctx context.Context, host string) (netip.Addr, error) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.Unmap()}
	} else {
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return netip.Addr{}, err
		}
		for _, ip := range ips {
			addrs = append(addrs, ip.Unmap())
		}
	}
	want := func(a netip.Addr) bool { return a.Is4() == (m.icmp.prefer == 4) }
	for _, a := range addrs {
		if want(a) {
			return a, nil
		}
	}
	if m.icmp.fallback && len(addrs) > 0 {
		return addrs[0], nil
	}
	return netip.Addr{}, fmt.Errorf("%s has no IPv%d address (ip_protocol_fallback: false)", host, m.icmp.prefer)
}

// openICMP opens a ping socket, else a raw one (privileged).
func openICMP(addr netip.Addr, open ICMPSocket) (*icmp.PacketConn, bool, error) {
	unpriv, raw, any := "udp4", "ip4:icmp", "0.0.0.0"
	if !addr.Is4() {
		unpriv, raw, any = "udp6", "ip6:ipv6-icmp", "::"
	}
	c, err := open(unpriv, any)
	if err == nil {
		return c, false, nil
	}
	c, rerr := open(raw, any)
	if rerr == nil {
		return c, true, nil
	}
	return nil, false, fmt.Errorf("a ping socket: %w; a raw socket: %w", err, rerr)
}

// icmpNotPermitted is the one line an icmp probe answers when no ICMP
// socket may be opened ("" for another error): why, and how to allow it.
func icmpNotPermitted(err error) string {
	if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EACCES) {
		return ""
	}
	rng := "unknown"
	if b, rerr := os.ReadFile("/proc/sys/net/ipv4/ping_group_range"); rerr == nil {
		rng = strings.Join(strings.Fields(string(b)), " ")
	}
	return fmt.Sprintf("ICMP sockets are not permitted: a ping socket needs the process's group (gid %d) within net.ipv4.ping_group_range (now %q), a raw socket root or CAP_NET_RAW; allow ping sockets with: sysctl -w net.ipv4.ping_group_range=\"0 2147483647\"", os.Getgid(), rng)
}
