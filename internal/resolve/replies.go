package resolve

import (
	"encoding/binary"
	"errors"
	"io"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/healthctl/healthctl/internal/classify"
)

// replyNotes is what the DNS replies of one lookup said, as they arrived:
// the rcode Go's error does not name ("server misbehaving" is REFUSED,
// FORMERR, NOTIMP and SERVFAIL alike), a truncated reply, a TCP retry that
// ended without a reply, a reply that does not parse. Guarded by
// Client.mu.
type replyNotes struct {
	rcode     dnsmessage.RCode
	hasRCode  bool
	truncated bool
	tcpFailed bool
	garbled   bool
}

// reply notes one whole reply (tcp: read over TCP).
func (r *replyNotes) reply(b []byte, tcp bool) {
	var p dnsmessage.Parser
	h, err := p.Start(b)
	if err != nil {
		r.garbled = true
		return
	}
	if _, err := p.AllQuestions(); err != nil {
		r.garbled = true
		return
	}
	if h.Truncated && !tcp {
		r.truncated = true
	}
	switch h.RCode {
	case dnsmessage.RCodeSuccess, dnsmessage.RCodeNameError:
		// An answer about the name: Go reports it itself.
	default:
		if !r.hasRCode {
			r.rcode, r.hasRCode = h.RCode, true
		}
	}
}

// stream notes what a read of a TCP connection to a DNS server returned:
// buf collects a reply (two bytes of length, then the message) until it is
// whole; a read that ends the connection before a whole reply marks the
// TCP retry failed.
func (r *replyNotes) stream(buf *[]byte, b []byte, err error) {
	*buf = append(*buf, b...)
	for len(*buf) >= 2 {
		n := int(binary.BigEndian.Uint16(*buf))
		if len(*buf) < 2+n {
			break
		}
		r.reply((*buf)[2:2+n], true)
		*buf = (*buf)[2+n:]
	}
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || !isTimeoutErr(err)) {
		r.tcpFailed = true
	}
}

func isTimeoutErr(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// answer says what the replies amount to, and the text that says it; a
// reason is named only for what a server did send.
func (r *replyNotes) answer() (classify.DNSAnswer, string) {
	switch {
	case r.hasRCode && r.rcode == dnsmessage.RCodeRefused:
		return classify.DNSRefused, "the DNS server refused to answer (REFUSED)"
	case r.hasRCode && r.rcode == dnsmessage.RCodeFormatError:
		return classify.DNSQueryError, "the DNS server could not parse the query (FORMERR)"
	case r.hasRCode && r.rcode == dnsmessage.RCodeNotImplemented:
		return classify.DNSQueryError, "the DNS server does not implement the query (NOTIMP)"
	case r.hasRCode && r.rcode == dnsmessage.RCodeServerFailure:
		return classify.DNSServerFailure, "the DNS server failed to answer (SERVFAIL)"
	case r.hasRCode:
		return classify.DNSQueryError, "the DNS server answered " + r.rcode.String()
	case r.truncated && r.tcpFailed:
		return classify.DNSNoUsableAnswer, "the DNS server's reply was truncated and its TCP retry ended without a reply"
	case r.garbled:
		return classify.DNSNoUsableAnswer, "the DNS server's reply does not parse"
	case r.truncated:
		// Cut short while retrying over TCP: a truncated reply and no
		// other.
		return classify.DNSNoUsableAnswer, "the DNS server's reply was truncated and no whole reply came"
	}
	return classify.DNSUnknown, ""
}
