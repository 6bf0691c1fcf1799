package dnswire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

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
