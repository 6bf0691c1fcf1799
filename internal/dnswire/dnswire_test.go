package dnswire

import (
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/healthctl/healthctl/internal/classify"
)

// TestValidators: blackbox_exporter's validRRs, case by case (its
// prober/dns_test.go's, over the records its test servers answer).
func TestValidators(t *testing.T) {
	two := []string{"example.com.\t3600\tIN\tA\t127.0.0.1", "example.com.\t3600\tIN\tA\t127.0.0.2"}
	res := func(s ...string) []*regexp.Regexp {
		var out []*regexp.Regexp
		for _, e := range s {
			out = append(out, regexp.MustCompile(e))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		v    Validator
		rrs  []string
		fail string
	}{
		{"none", Validator{}, two, ""},
		{"none, no records", Validator{}, nil, ""},
		{"matches", Validator{FailIfMatches: res(".*127.0.0.2")}, two, `matches ".*127.0.0.2" (answer_fail_if_matches)`},
		{"matches nothing", Validator{FailIfMatches: res(".*127.0.0.3")}, two, ""},
		// blackbox's code: fails unless every record matches.
		{"all match", Validator{FailIfAllMatch: res(".*127.0.0.*")}, two, ""},
		{"not all match", Validator{FailIfAllMatch: res(".*127.0.0.1")}, two, `"example.com.\t3600\tIN\tA\t127.0.0.2" does not match ".*127.0.0.1" (answer_fail_if_all_match`},
		{"all match, no records", Validator{FailIfAllMatch: res(".")}, nil, ""},
		{"not matches", Validator{FailIfNotMatches: res(".*3600.*")}, two, ""},
		{"not matches fails", Validator{FailIfNotMatches: res(".*127.0.0.1")}, two, "does not match"},
		{"not matches, no records", Validator{FailIfNotMatches: res(".")}, nil, `no answer record to match "." (answer_fail_if_not_matches)`},
		{"none matches", Validator{FailIfNoneMatches: res(".*127.0.0.3.*")}, two, `no answer record matches ".*127.0.0.3.*" (answer_fail_if_none_matches)`},
		{"one of them matches", Validator{FailIfNoneMatches: res(".*127.0.0.3.*", ".*127.0.0.2")}, two, ""},
		{"none matches, no records", Validator{FailIfNoneMatches: res(".")}, nil, "no answer record to match"},
		{"matches and not matches", Validator{FailIfMatches: res(".*3600.*"), FailIfNotMatches: res(".*3600.*")}, two, "matches"},
	} {
		got := tc.v.Check("answer", tc.rrs)
		if (tc.fail == "") != (got == "") || !strings.Contains(got, tc.fail) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.fail)
		}
	}
}

// TestRecordText: records as miekg/dns writes them (what blackbox's
// validators match), from a reply dnsmessage packs.
func TestRecordText(t *testing.T) {
	n := dnsmessage.MustNewName
	h := func(name string, typ dnsmessage.Type) dnsmessage.ResourceHeader {
		return dnsmessage.ResourceHeader{Name: n(name), Type: typ, Class: dnsmessage.ClassINET, TTL: 300}
	}
	m := dnsmessage.Message{Header: dnsmessage.Header{ID: 7, Response: true, RCode: dnsmessage.RCodeSuccess},
		Questions: []dnsmessage.Question{{Name: n("example.com."), Type: dnsmessage.TypeALL, Class: dnsmessage.ClassINET}},
		Answers: []dnsmessage.Resource{
			{Header: h("example.com.", dnsmessage.TypeA), Body: &dnsmessage.AResource{A: [4]byte{192, 0, 2, 1}}},
			{Header: h("example.com.", dnsmessage.TypeAAAA), Body: &dnsmessage.AAAAResource{AAAA: [16]byte{0x20, 0x01, 0x0d, 0xb8, 15: 1}}},
			{Header: h("www.example.com.", dnsmessage.TypeCNAME), Body: &dnsmessage.CNAMEResource{CNAME: n("example.com.")}},
			{Header: h("example.com.", dnsmessage.TypeNS), Body: &dnsmessage.NSResource{NS: n("ns1.example.com.")}},
			{Header: h("example.com.", dnsmessage.TypeMX), Body: &dnsmessage.MXResource{Pref: 10, MX: n("mail.example.com.")}},
			{Header: h("example.com.", dnsmessage.TypeTXT), Body: &dnsmessage.TXTResource{TXT: []string{`v=spf1 -all`, `say "hi"\`}}},
			{Header: h("_sip._tcp.example.com.", dnsmessage.TypeSRV), Body: &dnsmessage.SRVResource{Priority: 1, Weight: 2, Port: 5060, Target: n("sip.example.com.")}},
			{Header: h("example.com.", dnsmessage.TypeSOA), Body: &dnsmessage.SOAResource{NS: n("ns.example.com."), MBox: n("noc.example.com."), Serial: 1000, Refresh: 7200, Retry: 3600, Expire: 1209600, MinTTL: 3600}},
			{Header: h("example.com.", 257), Body: &dnsmessage.UnknownResource{Type: 257, Data: []byte{0, 5, 'i', 's', 's', 'u', 'e'}}},
		},
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"example.com.\t300\tIN\tA\t192.0.2.1",
		"example.com.\t300\tIN\tAAAA\t2001:db8::1",
		"www.example.com.\t300\tIN\tCNAME\texample.com.",
		"example.com.\t300\tIN\tNS\tns1.example.com.",
		"example.com.\t300\tIN\tMX\t10 mail.example.com.",
		"example.com.\t300\tIN\tTXT\t\"v=spf1 -all\" \"say \\\"hi\\\"\\\\\"",
		"_sip._tcp.example.com.\t300\tIN\tSRV\t1 2 5060 sip.example.com.",
		"example.com.\t300\tIN\tSOA\tns.example.com. noc.example.com. 1000 7200 3600 1209600 3600",
		"example.com.\t300\tIN\tCAA\t\\# 7 00056973737565",
	}
	if got := strings.Join(r.Sections[0], "\n"); got != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if !r.HasSerial || r.Serial != 1000 || r.ID != 7 || !r.Response {
		t.Errorf("reply %+v", r)
	}
	// Cut inside a record: not DNS, unless TC says it was cut.
	if _, err := Parse(b[:len(b)-3]); err == nil {
		t.Error("a reply cut short parsed")
	}
	b[2] |= 0x02 // TC
	r, err = Parse(b[:len(b)-3])
	if err != nil || !r.Truncated || len(r.Sections[0]) != len(want)-1 {
		t.Errorf("truncated: %v %+v", err, r)
	}
}

// TestAnswerReason: the rcode first, then the validators; nothing read is
// not DNS.
func TestAnswerReason(t *testing.T) {
	for _, tc := range []struct {
		a    Answer
		want classify.Reason
		text string
	}{
		{Answer{}, Protocol, ""},
		{Answer{Read: true, NotDNS: true, Seen: `"HTTP/1.1"`}, Protocol, `not DNS: the server sent "HTTP/1.1"`},
		{Answer{Read: true, Rcode: "NXDOMAIN", Question: "x. IN A", Want: "NOERROR"}, Rcode, "the DNS server answered NXDOMAIN to x. IN A (want NOERROR)"},
		{Answer{Read: true, Rcode: "NOERROR", RcodeOK: true, Failed: "no answer record"}, classify.ConditionFailed, ""},
		{Answer{Read: true, Rcode: "NOERROR", RcodeOK: true}, classify.OK, ""},
	} {
		if r := tc.a.Reason(); r != tc.want || tc.a.Text(r, nil) != tc.text {
			t.Errorf("%+v: %s %q, want %s %q", tc.a, r, tc.a.Text(r, nil), tc.want, tc.text)
		}
	}
}
