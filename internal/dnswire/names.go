package dnswire

import (
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// mnemonic is a name and its number: types and classes are tables of
// them, which the linker lays out (a package-level map literal is built
// at every start, probe included).
type mnemonic struct {
	name string
	n    uint16
}

// types are the record types by mnemonic (miekg/dns's names) that the
// query may ask for; others are TYPEn.
var types = [...]mnemonic{
	{"A", 1}, {"NS", 2}, {"CNAME", 5}, {"SOA", 6}, {"PTR", 12}, {"HINFO", 13}, {"MX", 15}, {"TXT", 16},
	{"AAAA", 28}, {"LOC", 29}, {"SRV", 33}, {"NAPTR", 35}, {"DS", 43}, {"SSHFP", 44}, {"RRSIG", 46},
	{"NSEC", 47}, {"DNSKEY", 48}, {"NSEC3", 50}, {"NSEC3PARAM", 51}, {"TLSA", 52}, {"CDS", 59}, {"CDNSKEY", 60},
	{"SVCB", 64}, {"HTTPS", 65}, {"SPF", 99}, {"AXFR", 252}, {"ANY", 255}, {"CAA", 257},
}

// ParseType reads a record type: a mnemonic (any case) or TYPEn.
func ParseType(s string) (dnsmessage.Type, bool) {
	u := strings.ToUpper(s)
	for _, t := range types {
		if t.name == u {
			return dnsmessage.Type(t.n), true
		}
	}
	if n, err := strconv.ParseUint(strings.TrimPrefix(u, "TYPE"), 10, 16); strings.HasPrefix(u, "TYPE") && err == nil {
		return dnsmessage.Type(n), true
	}
	return 0, false
}

// TypeName is a record type as miekg/dns writes it ("A", "TYPE65534").
func TypeName(t dnsmessage.Type) string {
	for _, n := range types {
		if n.n == uint16(t) {
			return n.name
		}
	}
	return "TYPE" + strconv.Itoa(int(t))
}

// classes are the classes by name.
var classes = [...]mnemonic{{"IN", 1}, {"CS", 2}, {"CH", 3}, {"HS", 4}, {"NONE", 254}, {"ANY", 255}}

// ParseClass reads a class: a name (any case) or CLASSn.
func ParseClass(s string) (dnsmessage.Class, bool) {
	u := strings.ToUpper(s)
	for _, c := range classes {
		if c.name == u {
			return dnsmessage.Class(c.n), true
		}
	}
	if n, err := strconv.ParseUint(strings.TrimPrefix(u, "CLASS"), 10, 16); strings.HasPrefix(u, "CLASS") && err == nil {
		return dnsmessage.Class(n), true
	}
	return 0, false
}

// ClassName is a class as miekg/dns writes it ("IN", "CLASS7").
func ClassName(c dnsmessage.Class) string {
	for _, n := range classes {
		if n.n == uint16(c) {
			return n.name
		}
	}
	return "CLASS" + strconv.Itoa(int(c))
}

// rcodes are the rcodes by name (miekg/dns's).
var rcodes = []string{0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED",
	6: "YXDOMAIN", 7: "YXRRSET", 8: "NXRRSET", 9: "NOTAUTH", 10: "NOTZONE",
	16: "BADSIG", 17: "BADKEY", 18: "BADTIME", 19: "BADMODE", 20: "BADNAME", 21: "BADALG", 22: "BADTRUNC", 23: "BADCOOKIE"}

// ParseRcode reads an rcode's name (any case; BADVERS is BADSIG's 16).
func ParseRcode(s string) (dnsmessage.RCode, bool) {
	u := strings.ToUpper(s)
	if u == "BADVERS" {
		return 16, true
	}
	if i := slices.Index(rcodes, u); i >= 0 && u != "" {
		return dnsmessage.RCode(i), true
	}
	return 0, false
}

// RcodeName is an rcode's name ("NXDOMAIN"), or its number.
func RcodeName(r dnsmessage.RCode) string {
	if int(r) < len(rcodes) && rcodes[r] != "" {
		return rcodes[r]
	}
	return strconv.Itoa(int(r))
}
