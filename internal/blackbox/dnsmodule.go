package blackbox

// prober: dns: a module's dns: section mapped onto a dns:// URL's query
// (internal/dnswire's parameters), so that /probe and `healthctl probe
// dns://…` are one implementation: the module's target is the DNS server
// (host[:port]), the URL's path and parameters the module's question.

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/dnswire"
	"github.com/healthctl/healthctl/internal/target"
)

// dnsRefused says why healthctl does not map a field of the dns section
// (in blackbox's documentation's words, then why), ok false for a field it
// does not know.
func dnsRefused(field string) (why string, ok bool) {
	if field == "source_ip_address" {
		return refused()[field], true
	}
	return "", false
}

// dnsSection maps the module's dns: section (nil: none) onto the query the
// module's dns:// URLs carry (m.dnsQuery) and the probe's address family.
// blackbox's defaults: query_type ANY, query_class IN, transport udp,
// recursion_desired true, valid_rcodes NOERROR, ip6 preferred with a
// fallback.
func (m *Module) dnsSection(sec *yaml.Node, in *target.Input, fail failFunc, line int) error {
	name := m.Name
	q := url.Values{}
	q.Set("type", "ANY")
	var qname string
	fallback, preferred, dot := true, "ip6", false
	if sec != nil {
		line = sec.Line
		for i := 0; i+1 < len(sec.Content); i += 2 {
			k, val := sec.Content[i], deref(sec.Content[i+1])
			field := "dns." + k.Value
			f := newField(val, fail, name, field)
			bad, str, boolean := f.bad, f.str, f.boolean
			var err error
			var s string
			switch k.Value {
			case "query_name":
				qname, err = str()
			case "query_type":
				if s, err = str(); err == nil {
					if _, ok := dnswire.ParseType(s); !ok {
						return bad("%q: want a record type (A, AAAA, CNAME, MX, NS, PTR, SOA, SRV, TXT, ANY, TYPE65…)", s)
					}
					q.Set("type", s)
				}
			case "query_class":
				if s, err = str(); err == nil {
					if _, ok := dnswire.ParseClass(s); !ok {
						return bad("%q: want IN, CH, HS, NONE, ANY or CLASSn", s)
					}
					q.Set("class", s)
				}
			case "transport_protocol":
				if s, err = str(); err == nil {
					if s != "udp" && s != "tcp" {
						// blackbox: "Expected transport protocol udp or tcp".
						return bad("%q: want udp or tcp", s)
					}
					q.Set("transport", s)
				}
			case "recursion_desired":
				var b bool
				if b, err = boolean(); err == nil {
					q.Set("recursion_desired", strconv.FormatBool(b))
				}
			case "valid_rcodes":
				if val.Kind != yaml.SequenceNode {
					return bad("want a list of rcodes (NOERROR, NXDOMAIN …)")
				}
				if len(val.Content) == 0 {
					return bad("[]: no rcode could pass (none: NOERROR)")
				}
				for _, e := range val.Content {
					e = deref(e)
					if _, ok := dnswire.ParseRcode(e.Value); !ok || e.Kind != yaml.ScalarNode {
						return bad("%q: want rcode names (NOERROR, NXDOMAIN, SERVFAIL, REFUSED …)", e.Value)
					}
					q.Add("rcode", e.Value)
				}
			case "validate_answer_rrs", "validate_authority_rrs", "validate_additional_rrs":
				err = dnsValidator(val, q, strings.TrimSuffix(strings.TrimPrefix(k.Value, "validate_"), "_rrs"), bad)
			case "preferred_ip_protocol":
				if preferred, err = str(); err == nil && preferred != "ip4" && preferred != "ip6" {
					err = bad("%q: want ip4 or ip6", preferred)
				}
			case "ip_protocol_fallback":
				fallback, err = boolean()
			case "dns_over_tls":
				if dot, err = boolean(); err == nil && dot {
					err = bad("true: not supported: \"whether to use DNS over TLS\": healthctl's %s:// speaks DNS over UDP and TCP only", m.row.Name)
				}
			case "tls_config":
				// Only DNS over TLS reads it (blackbox too), and that is
				// refused above: nothing to map.
				if val.Kind != yaml.MappingNode {
					err = bad("want a mapping")
				}
			default:
				if why, ok := dnsRefused(k.Value); ok {
					return fail(k.Line, name, field, "not supported: %s", why)
				}
				return fail(k.Line, name, field, "unknown field (want query_name, query_type, query_class, transport_protocol, recursion_desired, valid_rcodes, validate_answer_rrs, validate_authority_rrs, validate_additional_rrs, preferred_ip_protocol, ip_protocol_fallback, dns_over_tls or tls_config)")
			}
			if err != nil {
				return err
			}
		}
	}
	if qname == "" {
		// blackbox: "query name must be set for DNS module".
		return fail(line, name, "dns.query_name", "missing: a dns module must name the query (query_name:)")
	}
	m.dnsQuery = "/" + url.PathEscape(qname) + "?" + q.Encode()
	raw, err := m.dnsURL("127.0.0.1")
	var u *url.URL
	if err == nil {
		u, err = url.Parse(raw)
	}
	if err == nil {
		_, err = dnswire.ParseURL(u)
	}
	if err != nil {
		return fail(line, name, "dns.query_name", "%q: %v", qname, err)
	}
	m.prefer = map[string]int{"ip4": 4, "ip6": 6}[preferred]
	if !fallback {
		in.IPv4, in.IPv6, m.prefer = preferred == "ip4", preferred == "ip6", 0
	}
	return nil
}

// dnsValidators are blackbox's validator fields, by the URL's names for
// them (dnswire's validator names: a URL naming another is refused).
var dnsValidators = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"fail_if_matches_regexp": "fail_if_matches", "fail_if_all_match_regexp": "fail_if_all_match",
		"fail_if_not_matches_regexp": "fail_if_not_matches", "fail_if_none_matches_regexp": "fail_if_none_matches",
	}
})

// dnsValidator maps a validate_*_rrs section onto the URL's SECTION_NAME
// parameters: blackbox's four lists of regular expressions.
func dnsValidator(v *yaml.Node, q url.Values, section string, bad func(string, ...any) error) error {
	if v.Kind != yaml.MappingNode {
		return bad("want a mapping of fail_if_*_regexp lists")
	}
	for j := 0; j+1 < len(v.Content); j += 2 {
		k, val := v.Content[j].Value, deref(v.Content[j+1])
		name, ok := dnsValidators()[k]
		if !ok {
			return bad("%s: unknown field (want fail_if_matches_regexp, fail_if_all_match_regexp, fail_if_not_matches_regexp or fail_if_none_matches_regexp)", k)
		}
		if val.Kind != yaml.SequenceNode {
			return bad("%s: want a list of regexps", k)
		}
		for _, e := range val.Content {
			e = deref(e)
			if _, err := regexp.Compile(e.Value); err != nil || e.Kind != yaml.ScalarNode {
				return bad("%s: %q: %v", k, e.Value, err)
			}
			q.Add(section+"_"+name, e.Value)
		}
	}
	return nil
}

// dnsURL is the dns:// URL of a /probe target: the DNS server as
// host[:port], and the module's question.
func (m *Module) dnsURL(tgt string) (string, error) {
	if tgt == "" || strings.ContainsAny(tgt, "/?#@ ") {
		return "", fmt.Errorf("target %q: want the DNS server as host[:port]", tgt)
	}
	s := m.row
	return s.URL(tgt) + m.dnsQuery, nil
}
