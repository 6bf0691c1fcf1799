package blackbox

import (
	"net/url"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/target"
)

// TestDNSModules: a dns: section becomes the dns:// URL's question, with
// blackbox's defaults; what healthctl cannot do is refused, naming the
// field.
func TestDNSModules(t *testing.T) {
	for _, tc := range []struct{ body, url, err string }{
		{"dns: {query_name: app.invalid}", "dns://127.0.0.1:53/app.invalid?type=ANY", ""},
		{"dns: {query_name: app.invalid, query_type: MX, query_class: CH, transport_protocol: tcp, recursion_desired: false, valid_rcodes: [NOERROR, NXDOMAIN]}",
			"dns://127.0.0.1:53/app.invalid?class=CH&rcode=NOERROR&rcode=NXDOMAIN&recursion_desired=false&transport=tcp&type=MX", ""},
		{"dns: {query_name: app.invalid, validate_answer_rrs: {fail_if_matches_regexp: ['a+b'], fail_if_none_matches_regexp: ['\\d']}, validate_additional_rrs: {fail_if_all_match_regexp: [x]}}",
			"dns://127.0.0.1:53/app.invalid?additional_fail_if_all_match=x&answer_fail_if_matches=a%2Bb&answer_fail_if_none_matches=%5Cd&type=ANY", ""},
		{"dns: {query_name: app.invalid, tls_config: {insecure_skip_verify: true}}", "dns://127.0.0.1:53/app.invalid?type=ANY", ""},
		{"dns: {query_type: A}", "", `dns.query_name: missing`},
		{"timeout: 1s", "", `dns.query_name: missing`},
		{"dns: {query_name: a..b}", "", `dns.query_name: "a..b": dns URL's query name "a..b" is not a domain name`},
		{"dns: {query_name: x, query_type: BOGUS}", "", `dns.query_type: "BOGUS": want a record type`},
		{"dns: {query_name: x, query_class: XX}", "", `dns.query_class: "XX"`},
		{"dns: {query_name: x, transport_protocol: quic}", "", `dns.transport_protocol: "quic": want udp or tcp`},
		{"dns: {query_name: x, valid_rcodes: []}", "", `dns.valid_rcodes: []: no rcode could pass`},
		{"dns: {query_name: x, valid_rcodes: [NOPE]}", "", `dns.valid_rcodes: "NOPE"`},
		{"dns: {query_name: x, validate_answer_rrs: {fail_if_matches: [x]}}", "", `dns.validate_answer_rrs: fail_if_matches: unknown field`},
		{"dns: {query_name: x, validate_answer_rrs: {fail_if_matches_regexp: ['(']}}", "", `dns.validate_answer_rrs: fail_if_matches_regexp: "(": error parsing regexp`},
		{"dns: {query_name: x, dns_over_tls: true}", "", `dns.dns_over_tls: true: not supported: "whether to use DNS over TLS"`},
		{"dns: {query_name: x, source_ip_address: 127.0.0.2}", "", `dns.source_ip_address: not supported: "the source address for a connection"`},
		{"dns: {query_name: x, typo: 1}", "", `dns.typo: unknown field (want query_name`},
		{"dns: {query_name: x}\n    http: {}", "", `http: given for prober dns: want dns:`},
	} {
		body := "modules:\n  m:\n    prober: dns\n    " + tc.body + "\n"
		mods, err := ParseModules("bb.yml", []byte(body), target.Defaults(), func(string) string { return "" })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.body, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		o, err := mods["m"].Options("127.0.0.1:53", 0)
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		if got, _ := url.PathUnescape(o.URL.String()); o.URL.String() != tc.url {
			t.Errorf("%s: %s (%s), want %s", tc.body, o.URL, got, tc.url)
		}
	}
	// The target is the server alone.
	mods, _ := ParseModules("bb.yml", []byte("modules:\n  m:\n    prober: dns\n    dns: {query_name: x}\n"), target.Defaults(), func(string) string { return "" })
	for _, tgt := range []string{"", "127.0.0.1/y", "127.0.0.1?type=MX", "u@127.0.0.1", "127.0.0.1#f"} {
		if _, err := mods["m"].Options(tgt, 0); err == nil {
			t.Errorf("target %q: no error", tgt)
		}
	}
}
