package resolve

import (
	"encoding/binary"
	"io"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/healthctl/healthctl/internal/classify"
)

func packReply(t *testing.T, rcode dnsmessage.RCode, truncated bool) []byte {
	t.Helper()
	m := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: 7, Response: true, RCode: rcode, Truncated: truncated},
		Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName("x.invalid."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}},
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReplyNotes: what the replies said becomes an answer naming only what
// a server sent.
func TestReplyNotes(t *testing.T) {
	garbled := append(packReply(t, dnsmessage.RCodeSuccess, false)[:12], 7, 'g', 'a')
	for _, c := range []struct {
		name string
		feed func(r *replyNotes)
		want classify.DNSAnswer
	}{
		{"refused", func(r *replyNotes) { r.reply(packReply(t, dnsmessage.RCodeRefused, false), false) }, classify.DNSRefused},
		{"formerr", func(r *replyNotes) { r.reply(packReply(t, dnsmessage.RCodeFormatError, false), false) }, classify.DNSQueryError},
		{"notimp", func(r *replyNotes) { r.reply(packReply(t, dnsmessage.RCodeNotImplemented, false), false) }, classify.DNSQueryError},
		{"servfail", func(r *replyNotes) { r.reply(packReply(t, dnsmessage.RCodeServerFailure, false), false) }, classify.DNSServerFailure},
		{"nxdomain is Go's to report", func(r *replyNotes) { r.reply(packReply(t, dnsmessage.RCodeNameError, false), false) }, classify.DNSUnknown},
		{"garbled", func(r *replyNotes) { r.reply(garbled, false) }, classify.DNSNoUsableAnswer},
		{"tc then TCP closed", func(r *replyNotes) {
			r.reply(packReply(t, dnsmessage.RCodeSuccess, true), false)
			var buf []byte
			r.stream(&buf, nil, io.EOF)
		}, classify.DNSNoUsableAnswer},
		{"tc then TCP answers", func(r *replyNotes) {
			r.reply(packReply(t, dnsmessage.RCodeSuccess, true), false)
			b := packReply(t, dnsmessage.RCodeServerFailure, false)
			var buf []byte
			framed := binary.BigEndian.AppendUint16(nil, uint16(len(b)))
			r.stream(&buf, framed, nil)
			r.stream(&buf, b, nil)
		}, classify.DNSServerFailure},
	} {
		var r replyNotes
		c.feed(&r)
		if got, text := r.answer(); got != c.want {
			t.Errorf("%s: %v (%q), want %v", c.name, got, text, c.want)
		}
	}
}
