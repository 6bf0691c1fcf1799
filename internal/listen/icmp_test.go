package listen

import (
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/icmp"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

const icmpModules = `modules:
  icmp:
    prober: icmp
  icmp_ttl5:
    prober: icmp
    timeout: 5s
    icmp:
      ttl: 5
  icmp4:
    prober: icmp
    icmp:
      preferred_ip_protocol: ip4
      payload_size: 100
  icmp6_only:
    prober: icmp
    icmp:
      preferred_ip_protocol: ip6
      ip_protocol_fallback: false
`

// icmpHandler is a listener with the icmp modules, loopback allowed, its
// sockets opened by open (nil: the real ones).
func icmpHandler(t *testing.T, open ICMPSocket) *Service {
	t.Helper()
	mods, err := blackbox.ParseModules("bb.yml", []byte(icmpModules), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := ParseAllow([]string{"127.0.0.1", "::1", "127.0.0.2:80"})
	return New(Config{Interval: time.Minute, Probe: probe.Run, Modules: mods, Allow: allow, ICMPSocket: open})
}

// TestICMPEcho: an icmp module pings a loopback address with a ping
// socket or a raw one and answers blackbox's icmp series — the three
// phases, the reply's hop limit (64, the loopback's default TTL) — and
// the address's families. Skipped where this process may open neither
// (TestICMPNotPermitted covers that answer).
func TestICMPEcho(t *testing.T) {
	h := icmpHandler(t, nil).Handler()
	for _, c := range []struct{ module, target, family string }{
		{"icmp", "127.0.0.1", "4"}, {"icmp_ttl5", "127.0.0.1", "4"}, {"icmp4", "127.0.0.1", "4"}, {"icmp", "::1", "6"},
	} {
		code, body := get(t, h, "/probe?module="+c.module+"&target="+url.QueryEscape(c.target))
		if code != 200 {
			t.Fatalf("%s %s: %d %s", c.module, c.target, code, body)
		}
		checkExposition(t, body)
		if strings.Contains(body, "icmp_not_permitted") {
			t.Skipf("no ICMP socket may be opened here:\n%s", body)
		}
		if c.family == "6" && strings.Contains(body, `reason="host_unreachable"`) {
			t.Logf("%s %s: no IPv6 loopback here:\n%s", c.module, c.target, body)
			continue
		}
		for _, want := range []string{"probe_success 1", "probe_ip_protocol " + c.family, "probe_icmp_reply_hop_limit 64",
			`healthctl_probe_outcome{outcome="pass",reason="ok"} 1`} {
			if !strings.Contains(body, "\n"+want+"\n") {
				t.Errorf("%s %s: no %q\n%s", c.module, c.target, want, body)
			}
		}
		for _, ph := range []string{"resolve", "setup", "rtt"} {
			if !strings.Contains(body, `probe_icmp_duration_seconds{phase="`+ph+`"} `) {
				t.Errorf("%s %s: no phase %s\n%s", c.module, c.target, ph, body)
			}
		}
		if strings.Contains(body, "probe_http_") || strings.Contains(body, "probe_grpc_") {
			t.Errorf("%s %s: another prober's series\n%s", c.module, c.target, body)
		}
	}
}

// TestICMPNotPermitted: where neither a ping socket nor a raw one may be
// opened, an icmp module answers probe_success 0 (never a refusal) with
// the one line that says why and how to allow ping sockets; debug=true
// says it too.
func TestICMPNotPermitted(t *testing.T) {
	var tried []string
	h := icmpHandler(t, func(network, address string) (*icmp.PacketConn, error) {
		tried = append(tried, network)
		return nil, &net.OpError{Op: "listen", Net: network, Err: syscall.EPERM}
	}).Handler()
	code, body := get(t, h, "/probe?module=icmp&target=127.0.0.1")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	checkExposition(t, body)
	for _, want := range []string{"\nprobe_success 0\n", "\nprobe_ip_protocol 4\n", `probe_icmp_duration_seconds{phase="rtt"} 0`,
		`healthctl_probe_outcome{outcome="unknown",reason="local_error"} 1`, `healthctl_probe_not_started{why="icmp_not_permitted",prober="icmp"} 1`,
		"net.ipv4.ping_group_range", `sysctl -w net.ipv4.ping_group_range="0 2147483647"`, "CAP_NET_RAW"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q\n%s", want, body)
		}
	}
	if strings.Contains(body, "probe_icmp_reply_hop_limit") {
		t.Errorf("a hop limit without a reply\n%s", body)
	}
	if strings.Join(tried, ",") != "udp4,ip4:icmp" {
		t.Errorf("sockets tried %v, want the ping socket, then a raw one", tried)
	}
	code, body = get(t, h, "/probe?module=icmp&target=127.0.0.1&debug=true")
	if code != 200 || !strings.HasPrefix(body, "Logs for the probe:\n") || !strings.Contains(body, "ping_group_range") {
		t.Errorf("debug: %d %s", code, body)
	}
}

// TestICMPTargets: an icmp target is a host: checked against
// --probe-allow (403 outside it); what is no host answers probe_success 0
// as blackbox's lookup of it does (nothing looked up); an address of
// the family a module without ip_protocol_fallback excludes answers
// probe_success 0 (blackbox finds no address), before any socket.
func TestICMPTargets(t *testing.T) {
	h := icmpHandler(t, func(network, address string) (*icmp.PacketConn, error) {
		t.Errorf("a socket opened (%s)", network)
		return nil, syscall.EPERM
	}).Handler()
	for _, c := range []struct {
		module, target string
		code           int
		want           string
	}{
		{"icmp", "10.0.0.1", 403, "not allowed by --probe-allow"},
		{"icmp", "fe80::1%lo", 403, `target "fe80::1%lo" is not allowed by --probe-allow`},
		{"icmp", "127.0.0.2", 403, `target "127.0.0.2" is not allowed by --probe-allow`},
		{"icmp", "http://127.0.0.1/", 200, `healthctl_probe_outcome{outcome="dns",reason="dns_nxdomain"} 1`},
		{"icmp", "127.0.0.1:80", 200, "\nprobe_success 0\n"},
		{"icmp", "127.0.0.1:80", 200, `probe_icmp_duration_seconds{phase="rtt"} 0`},
		{"icmp6_only", "127.0.0.1", 200, `healthctl_probe_outcome{outcome="dns",reason="dns_no_address"} 1`},
	} {
		code, body := get(t, h, "/probe?module="+c.module+"&target="+url.QueryEscape(c.target))
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s, want %d %q", c.module, c.target, code, body, c.code, c.want)
		}
	}
}

// TestICMPModuleFields: an icmp section takes blackbox's icmp fields and
// refuses the rest, naming the field.
func TestICMPModuleFields(t *testing.T) {
	for yml, want := range map[string]string{
		"modules:\n  m:\n    prober: icmp\n    icmp:\n      ttl: 300\n":                    `bb.yml:5: module "m": icmp.ttl: "300": want a TTL from 0 to 255`,
		"modules:\n  m:\n    prober: icmp\n    icmp:\n      dont_fragment: true\n":         `icmp.dont_fragment: true: not supported: "set the DF-bit in the IP-header`,
		"modules:\n  m:\n    prober: icmp\n    icmp:\n      source_ip_address: 10.0.0.1\n": `icmp.source_ip_address: not supported:`,
		"modules:\n  m:\n    prober: icmp\n    icmp:\n      tls: true\n":                   `icmp.tls: unknown field`,
	} {
		_, err := blackbox.ParseModules("bb.yml", []byte(yml), target.Defaults(), noEnv)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", yml, err, want)
		}
	}
}
