package blackbox

// prober: icmp — blackbox's icmp prober, through the probe's icmp://
// exchange (internal/probe/icmp.go: one echo request on a Linux ping
// socket or a raw one; when neither may be opened the module still loads,
// and each probe answers probe_success 0 saying why and how to allow it,
// in the answer's healthctl_probe_not_started). This file reads the
// module's icmp: section into the URL's parameters and the family, and
// the target into the URL.

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/icmpwire"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

// icmpSection reads an icmp: section; its fields are blackbox's, and a
// field of another prober's is refused as blackbox refuses it. ttl and
// payload_size become the icmp:// URL's ttl= and size=;
// preferred_ip_protocol and ip_protocol_fallback the probe's family, as
// for every prober.
func (m *Module) icmpSection(sec *yaml.Node, in *target.Input, fail failFunc) error {
	q := url.Values{}
	prefer, fallback := 6, true
	if sec == nil {
		m.icmpQuery, m.prefer = "?", prefer
		return nil
	}
	for i := 0; i+1 < len(sec.Content); i += 2 {
		k, val := sec.Content[i], deref(sec.Content[i+1])
		field := "icmp." + k.Value
		bad := newField(val, fail, m.Name, field).bad
		switch k.Value {
		case "preferred_ip_protocol":
			switch val.Value {
			case "ip4":
				prefer = 4
			case "ip6", "":
				prefer = 6
			default:
				return bad("%q: want ip4 or ip6", val.Value)
			}
		case "ip_protocol_fallback":
			b, err := strconv.ParseBool(val.Value)
			if err != nil {
				return bad("%q: want true or false", val.Value)
			}
			fallback = b
		case "ttl":
			n, err := strconv.Atoi(val.Value)
			if err != nil || n < 0 || n > 255 {
				return bad("%q: want a TTL from 0 to 255", val.Value)
			}
			if n > 0 {
				q.Set("ttl", strconv.Itoa(n))
			}
		case "payload_size":
			n, err := strconv.Atoi(val.Value)
			if err != nil || n < 0 || n > 65000 {
				return bad("%q: want a size in bytes (0 to 65000)", val.Value)
			}
			if n > 0 {
				q.Set("size", strconv.Itoa(n))
			}
		case "dont_fragment":
			b, err := strconv.ParseBool(val.Value)
			if err != nil {
				return bad("%q: want true or false", val.Value)
			}
			if b {
				return bad("true: not supported: \"set the DF-bit in the IP-header. Only works with ip4, on *nix systems and requires raw sockets\": healthctl writes no IP header of its own")
			}
		default:
			if why, ok := refused()[k.Value]; ok {
				return fail(k.Line, m.Name, field, "not supported: %s", why)
			}
			return fail(k.Line, m.Name, field, "unknown field (want preferred_ip_protocol, ip_protocol_fallback, ttl, payload_size or dont_fragment)")
		}
	}
	m.icmpQuery = "?" + q.Encode()
	m.prefer = prefer
	if !fallback {
		// Only that family: -4 or -6.
		in.IPv4, in.IPv6, m.prefer = prefer == 4, prefer == 6, 0
	}
	return nil
}

// icmpURL is the icmp:// URL of a /probe target: a host name or an
// address (in brackets or not), nothing else.
func (m *Module) icmpURL(tgt string) (string, error) {
	host := strings.TrimSuffix(strings.TrimPrefix(tgt, "["), "]")
	a, err := netip.ParseAddr(host)
	if host == "" || err != nil && strings.ContainsAny(host, "/ @?#:%[]") {
		return "", &NoHost{tgt}
	}
	if err == nil && a.Is6() {
		// A zone's % escaped, as a URL writes it (RFC 6874).
		host = "[" + strings.Replace(host, "%", "%25", 1) + "]"
	}
	s := m.row
	return s.URL(host + strings.TrimSuffix(m.icmpQuery, "?")), nil
}

// NoHost is an icmp target that is no host name or address: blackbox
// looks it up and finds nothing (probe_success 0); nothing is looked up
// or sent here.
type NoHost struct{ tgt string }

func (e *NoHost) Error() string {
	return "target " + strconv.Quote(output.Bounded(output.Untrusted(e.tgt), 128)) + " is no host name or address (prober icmp)"
}

// Result is the probe's answer: no such name.
func (e *NoHost) Result(m *Module) probe.Result {
	return probe.Result{Outcome: classify.DNS, Reason: classify.DNSNXDomain, Error: e.Error(), Answer: m.notProbed()}
}

// notProbed is the answer of a module's probe that was never made (a
// target of no address the module may ping): for an icmp module, its
// series with every phase 0, as blackbox writes them; nil for another.
func (m *Module) notProbed() classify.Answer {
	if m.icmpQuery == "" {
		return nil
	}
	return &icmpwire.Answer{HopLimit: -1}
}
