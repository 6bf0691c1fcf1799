// Package dnswire is the DNS side of a dns:// probe, pure: the query a URL
// asks (name, type, class, recursion desired, the rcodes that pass, the
// record validators: blackbox_exporter's dns prober), the query's bytes,
// the reply read into its rcode and its records written as blackbox
// writes them (miekg/dns's presentation format: "name.\tTTL\tIN\tA\t…"),
// and the validators run over them. The probe carries the bytes (UDP or
// TCP).
package dnswire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// Query is what a dns:// URL asks: one question to the server the URL
// names.
type Query struct {
	// Name is the query name, fully qualified ("app.invalid.").
	Name string
	// Type and Class are the question's (default A and IN).
	Type  dnsmessage.Type
	Class dnsmessage.Class
	// TCP: transport=tcp (default UDP, as blackbox and dig).
	TCP bool
	// Recursion is the RD flag (default set, as blackbox).
	Recursion bool
	// Rcodes are the rcodes that pass (default NOERROR alone).
	Rcodes []dnsmessage.RCode
	// Validators are the record validators of the answer, authority and
	// additional sections, in that order.
	Validators [3]Validator
}

// The sections a validator applies to, as the URL's parameters name them.
var Sections = [3]string{"answer", "authority", "additional"}

// Validator is blackbox's DNSRRValidator: regular expressions over a
// section's records (each as its presentation-format text).
type Validator struct {
	// FailIfMatches: the probe fails if any record matches one.
	FailIfMatches []*regexp.Regexp
	// FailIfAllMatch: the probe fails unless every record matches each
	// (blackbox's code, whatever the name says: it fails when one
	// record does not match, and passes when there are none).
	FailIfAllMatch []*regexp.Regexp
	// FailIfNotMatches: the probe fails if a record does not match one,
	// or if there is no record.
	FailIfNotMatches []*regexp.Regexp
	// FailIfNoneMatches: the probe fails unless some record matches each,
	// and if there is no record.
	FailIfNoneMatches []*regexp.Regexp
}

// The validators' names: blackbox's, without _regexp. A URL's parameter
// is SECTION_NAME (answer_fail_if_matches).
var validatorNames = [4]string{"fail_if_matches", "fail_if_all_match", "fail_if_not_matches", "fail_if_none_matches"}

// list is the validator's list named by i (validatorNames' order).
func (v *Validator) list(i int) *[]*regexp.Regexp {
	return [4]*[]*regexp.Regexp{&v.FailIfMatches, &v.FailIfAllMatch, &v.FailIfNotMatches, &v.FailIfNoneMatches}[i]
}

// Form is a dns:// URL's shape, for errors.
const Form = "dns://SERVER[:PORT]/NAME[?type=A&transport=udp|tcp&rcode=NOERROR&…]"

// Parameters are the parameters a dns:// URL takes, besides the
// validators' (SECTION_VALIDATOR).
var Parameters = []string{"type", "class", "transport", "recursion_desired", "rcode"}

// ParseURL reads a dns:// URL's query: the path is the query name, the
// parameters the rest. Every error names the part that is wrong.
func ParseURL(u *url.URL) (Query, error) {
	q := Query{Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, Recursion: true}
	switch {
	case u.User != nil:
		return q, fmt.Errorf("%s URL has credentials, which DNS cannot send (want %s)", u.Scheme, Form)
	case u.Fragment != "":
		return q, fmt.Errorf("%s URL has a fragment (want %s)", u.Scheme, Form)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" || strings.HasPrefix(name, "/") {
		return q, fmt.Errorf("%s URL has no query name (want %s; the root is /.)", u.Scheme, Form)
	}
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	if _, err := dnsmessage.NewName(name); err != nil || strings.Contains(name, "..") || strings.HasPrefix(name, ".") && name != "." {
		return q, fmt.Errorf("%s URL's query name %q is not a domain name", u.Scheme, strings.TrimPrefix(u.Path, "/"))
	}
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if len(l) > 63 {
			return q, fmt.Errorf("%s URL's query name has a label longer than 63 bytes", u.Scheme)
		}
	}
	q.Name = name
	vals, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return q, fmt.Errorf("%s URL's query: %v", u.Scheme, err)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vs := vals[k]
		bad := func(v, want string) error {
			return fmt.Errorf("%s URL's %s=%q: want %s", u.Scheme, k, v, want)
		}
		one := func() (string, error) {
			if len(vs) > 1 {
				return "", fmt.Errorf("%s URL has %s twice", u.Scheme, k)
			}
			return vs[0], nil
		}
		switch k {
		case "type":
			v, err := one()
			if err != nil {
				return q, err
			}
			t, ok := ParseType(v)
			if !ok {
				return q, bad(v, "a record type (A, AAAA, CNAME, MX, NS, PTR, SOA, SRV, TXT, ANY, TYPE65…)")
			}
			q.Type = t
		case "class":
			v, err := one()
			if err != nil {
				return q, err
			}
			c, ok := ParseClass(v)
			if !ok {
				return q, bad(v, "IN, CH, HS, NONE, ANY or CLASSn")
			}
			q.Class = c
		case "transport":
			v, err := one()
			if err != nil {
				return q, err
			}
			switch strings.ToLower(v) {
			case "udp":
			case "tcp":
				q.TCP = true
			default:
				return q, bad(v, "udp or tcp")
			}
		case "recursion_desired":
			v, err := one()
			if err != nil {
				return q, err
			}
			b, err := strconv.ParseBool(v)
			if err != nil {
				return q, bad(v, "true or false")
			}
			q.Recursion = b
		case "rcode":
			for _, v := range vs {
				for r := range strings.SplitSeq(v, ",") {
					rc, ok := ParseRcode(strings.TrimSpace(r))
					if !ok {
						return q, bad(r, "rcode names (NOERROR, NXDOMAIN, SERVFAIL, REFUSED…)")
					}
					q.Rcodes = append(q.Rcodes, rc)
				}
			}
		default:
			sec, name, ok := strings.Cut(k, "_")
			si, vi := slices.Index(Sections[:], sec), slices.Index(validatorNames[:], name)
			if !ok || si < 0 || vi < 0 {
				return q, fmt.Errorf("%s URL has an unknown parameter %q (want %s, or SECTION_VALIDATOR: SECTION answer, authority or additional, VALIDATOR %s)",
					u.Scheme, k, strings.Join(Parameters, ", "), strings.Join(validatorNames[:], ", "))
			}
			l := q.Validators[si].list(vi)
			for _, v := range vs {
				re, err := regexp.Compile(v)
				if err != nil {
					return q, fmt.Errorf("%s URL's %s=%q: %v", u.Scheme, k, v, err)
				}
				*l = append(*l, re)
			}
		}
	}
	if len(q.Rcodes) == 0 {
		q.Rcodes = []dnsmessage.RCode{dnsmessage.RCodeSuccess}
	}
	return q, nil
}

// types are the record types by mnemonic (miekg/dns's names) that the
// query may ask for; others are TYPEn.
var types = map[string]uint16{
	"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "HINFO": 13, "MX": 15, "TXT": 16,
	"AAAA": 28, "LOC": 29, "SRV": 33, "NAPTR": 35, "DS": 43, "SSHFP": 44, "RRSIG": 46,
	"NSEC": 47, "DNSKEY": 48, "NSEC3": 50, "NSEC3PARAM": 51, "TLSA": 52, "CDS": 59, "CDNSKEY": 60,
	"SVCB": 64, "HTTPS": 65, "SPF": 99, "AXFR": 252, "ANY": 255, "CAA": 257,
}

// ParseType reads a record type: a mnemonic (any case) or TYPEn.
func ParseType(s string) (dnsmessage.Type, bool) {
	u := strings.ToUpper(s)
	if t, ok := types[u]; ok {
		return dnsmessage.Type(t), true
	}
	if n, err := strconv.ParseUint(strings.TrimPrefix(u, "TYPE"), 10, 16); strings.HasPrefix(u, "TYPE") && err == nil {
		return dnsmessage.Type(n), true
	}
	return 0, false
}

// TypeName is a record type as miekg/dns writes it ("A", "TYPE65534").
func TypeName(t dnsmessage.Type) string {
	for n, v := range types {
		if v == uint16(t) {
			return n
		}
	}
	return "TYPE" + strconv.Itoa(int(t))
}

// classes are the classes by name.
var classes = map[string]uint16{"IN": 1, "CS": 2, "CH": 3, "HS": 4, "NONE": 254, "ANY": 255}

// ParseClass reads a class: a name (any case) or CLASSn.
func ParseClass(s string) (dnsmessage.Class, bool) {
	u := strings.ToUpper(s)
	if c, ok := classes[u]; ok {
		return dnsmessage.Class(c), true
	}
	if n, err := strconv.ParseUint(strings.TrimPrefix(u, "CLASS"), 10, 16); strings.HasPrefix(u, "CLASS") && err == nil {
		return dnsmessage.Class(n), true
	}
	return 0, false
}

// ClassName is a class as miekg/dns writes it ("IN", "CLASS7").
func ClassName(c dnsmessage.Class) string {
	for n, v := range classes {
		if v == uint16(c) {
			return n
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

// Question is the query's question as dig writes it ("app.invalid. IN A").
func (q Query) Question() string {
	return q.Name + " " + ClassName(q.Class) + " " + TypeName(q.Type)
}

// Pack is the query's message with id: one question, RD as asked, no
// EDNS (as blackbox sends it). Over TCP it is prefixed with its length.
func (q Query) Pack(id uint16) ([]byte, error) {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), dnsmessage.Header{ID: id, RecursionDesired: q.Recursion})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	name, err := dnsmessage.NewName(q.Name)
	if err != nil {
		return nil, err
	}
	if err := b.Question(dnsmessage.Question{Name: name, Type: q.Type, Class: q.Class}); err != nil {
		return nil, err
	}
	msg, err := b.Finish()
	if err != nil || !q.TCP {
		return msg, err
	}
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(msg))), msg...), nil
}

// Reply is a reply read: its header's facts and its records as text.
type Reply struct {
	ID        uint16
	Response  bool
	Rcode     dnsmessage.RCode
	Truncated bool
	// Sections are the answer, authority and additional records, each
	// in presentation format.
	Sections [3][]string
	// Serial is the SOA serial of the answer's last SOA record;
	// HasSerial says there was one.
	Serial    uint32
	HasSerial bool
}

// ErrNotDNS is what a reply that does not parse wraps.
var ErrNotDNS = errors.New("not a DNS message")

// ID is a message's ID, false when it is too short for a header.
func ID(msg []byte) (uint16, bool) {
	if len(msg) < 12 {
		return 0, false
	}
	return binary.BigEndian.Uint16(msg), true
}

// Parse reads a reply. A truncated reply (TC) keeps the records that
// parse, as miekg/dns (blackbox's client) does; any other reply that does
// not parse is ErrNotDNS.
func Parse(msg []byte) (*Reply, error) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotDNS, err)
	}
	r := &Reply{ID: h.ID, Response: h.Response, Rcode: h.RCode, Truncated: h.Truncated}
	cut := func(err error) (*Reply, error) {
		if h.Truncated {
			return r, nil
		}
		return nil, fmt.Errorf("%w: %v", ErrNotDNS, err)
	}
	if err := p.SkipAllQuestions(); err != nil {
		return cut(err)
	}
	for s := range Sections {
		for {
			var rh dnsmessage.ResourceHeader
			switch s {
			case 0:
				rh, err = p.AnswerHeader()
			case 1:
				rh, err = p.AuthorityHeader()
			default:
				rh, err = p.AdditionalHeader()
			}
			if errors.Is(err, dnsmessage.ErrSectionDone) {
				break
			}
			if err != nil {
				return cut(err)
			}
			text, serial, isSOA, err := record(&p, rh)
			if err != nil {
				return cut(err)
			}
			if isSOA && s == 0 {
				r.Serial, r.HasSerial = serial, true
			}
			r.Sections[s] = append(r.Sections[s], text)
		}
	}
	return r, nil
}

// record reads one record's body and writes the record as miekg/dns
// does: owner, TTL, class, type and the data, tab-separated. Types it
// has no text for are RFC 3597's generic form (\# LEN HEX).
func record(p *dnsmessage.Parser, h dnsmessage.ResourceHeader) (text string, serial uint32, soa bool, err error) {
	hdr := name(h.Name) + "\t" + strconv.FormatUint(uint64(h.TTL), 10) + "\t" + ClassName(h.Class) + "\t" + TypeName(h.Type) + "\t"
	if h.Type == dnsmessage.TypeOPT {
		// EDNS's pseudo-record: its class is a size, its TTL flags.
		hdr = ";" + name(h.Name) + "\t" + strconv.FormatUint(uint64(h.TTL), 10) + "\tCLASS" + strconv.Itoa(int(h.Class)) + "\tOPT\t"
	}
	switch h.Type {
	case dnsmessage.TypeA:
		r, err := p.AResource()
		return hdr + netip.AddrFrom4(r.A).String(), 0, false, err
	case dnsmessage.TypeAAAA:
		r, err := p.AAAAResource()
		a := netip.AddrFrom16(r.AAAA)
		if a.Is4In6() {
			return hdr + "::ffff:" + a.Unmap().String(), 0, false, err
		}
		return hdr + a.String(), 0, false, err
	case dnsmessage.TypeCNAME:
		r, err := p.CNAMEResource()
		return hdr + name(r.CNAME), 0, false, err
	case dnsmessage.TypeNS:
		r, err := p.NSResource()
		return hdr + name(r.NS), 0, false, err
	case dnsmessage.TypePTR:
		r, err := p.PTRResource()
		return hdr + name(r.PTR), 0, false, err
	case dnsmessage.TypeMX:
		r, err := p.MXResource()
		return hdr + strconv.Itoa(int(r.Pref)) + " " + name(r.MX), 0, false, err
	case dnsmessage.TypeSRV:
		r, err := p.SRVResource()
		return hdr + fmt.Sprintf("%d %d %d %s", r.Priority, r.Weight, r.Port, name(r.Target)), 0, false, err
	case dnsmessage.TypeSOA:
		r, err := p.SOAResource()
		return hdr + fmt.Sprintf("%s %s %d %d %d %d %d", name(r.NS), name(r.MBox), r.Serial, r.Refresh, r.Retry, r.Expire, r.MinTTL), r.Serial, err == nil, err
	case dnsmessage.TypeTXT:
		r, err := p.TXTResource()
		quoted := make([]string, len(r.TXT))
		for i, s := range r.TXT {
			quoted[i] = txt(s)
		}
		return hdr + strings.Join(quoted, " "), 0, false, err
	}
	r, err := p.UnknownResource()
	return hdr + fmt.Sprintf(`\# %d %x`, len(r.Data), r.Data), 0, false, err
}

// name is a domain name as miekg/dns writes it: bytes outside printable
// ASCII as \DDD, and the characters zone files quote with a backslash.
func name(n dnsmessage.Name) string {
	s := n.String()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x21 || c > 0x7e:
			fmt.Fprintf(&b, `\%03d`, c)
		case strings.IndexByte(`"();@$\`, c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// txt is one character-string of a TXT record as miekg/dns writes it:
// quoted, `"` and `\` escaped, bytes outside printable ASCII as \DDD.
func txt(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			fmt.Fprintf(&b, `\%03d`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Check runs a section's validator over its records as blackbox's
// validRRs does: "" when they hold, else what failed (naming the
// validator as the URL's parameter sec_NAME, the expression and the
// record).
func (v *Validator) Check(sec string, rrs []string) string {
	param := func(i int) string { return sec + "_" + validatorNames[i] }
	if len(rrs) == 0 && len(v.FailIfNotMatches) > 0 {
		return fmt.Sprintf("no %s record to match %q (%s)", sec, v.FailIfNotMatches[0].String(), param(2))
	}
	if len(rrs) == 0 && len(v.FailIfNoneMatches) > 0 {
		return fmt.Sprintf("no %s record to match %q (%s)", sec, v.FailIfNoneMatches[0].String(), param(3))
	}
	for _, re := range v.FailIfMatches {
		for _, rr := range rrs {
			if re.MatchString(rr) {
				return fmt.Sprintf("%s record %q matches %q (%s)", sec, rr, re.String(), param(0))
			}
		}
	}
	for _, re := range v.FailIfAllMatch {
		for _, rr := range rrs {
			if !re.MatchString(rr) {
				// blackbox's code fails here: one record that does
				// not match.
				return fmt.Sprintf("%s record %q does not match %q (%s, as blackbox_exporter applies it)", sec, rr, re.String(), param(1))
			}
		}
	}
	for _, re := range v.FailIfNotMatches {
		for _, rr := range rrs {
			if !re.MatchString(rr) {
				return fmt.Sprintf("%s record %q does not match %q (%s)", sec, rr, re.String(), param(2))
			}
		}
	}
	if len(v.FailIfNoneMatches) > 0 && !slices.ContainsFunc(rrs, func(rr string) bool {
		return slices.ContainsFunc(v.FailIfNoneMatches, func(re *regexp.Regexp) bool { return re.MatchString(rr) })
	}) {
		// Any record matching any of them will do.
		return fmt.Sprintf("no %s record matches %s (%s)", sec, quoteAll(v.FailIfNoneMatches), param(3))
	}
	return ""
}

// Empty says the validator checks nothing.
func (v *Validator) Empty() bool {
	return len(v.FailIfMatches)+len(v.FailIfAllMatch)+len(v.FailIfNotMatches)+len(v.FailIfNoneMatches) == 0
}

// quoteAll is expressions quoted, joined with "or".
func quoteAll(res []*regexp.Regexp) string {
	q := make([]string, len(res))
	for i, re := range res {
		q[i] = strconv.Quote(re.String())
	}
	return strings.Join(q, " or ")
}
