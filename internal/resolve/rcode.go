package resolve

import (
	"context"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// askTimeout bounds each of Query's dial, write and read, within the
// context's deadline.
const askTimeout = 2 * time.Second

// Query sends one recursive query for name (fully qualified) over
// UDP and returns the rcode of the answer with the same ID, skipping
// answers to other IDs (to earlier queries that timed out).
func Query(ctx context.Context, server, name string, qtype dnsmessage.Type) (dnsmessage.RCode, error) {
	r, err := ask(ctx, server, name, qtype)
	return r.rcode, err
}

// reply is what askAgain reads of an answer: its rcode, the CNAME records
// of its answer section (owner → target, lower case, fully qualified),
// and whether it held an address record.
type reply struct {
	rcode   dnsmessage.RCode
	cnames  map[string]string
	hasAddr bool
}

// ask is Query, reading the answer section too when it is whole (a
// truncated answer gives its rcode only).
func ask(ctx context.Context, server, name string, qtype dnsmessage.Type) (reply, error) {
	n, err := dnsmessage.NewName(name)
	if err != nil {
		return reply{}, err
	}
	id := uint16(rand.Uint32())
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), dnsmessage.Header{ID: id, RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		return reply{}, err
	}
	if err := b.Question(dnsmessage.Question{Name: n, Type: qtype, Class: dnsmessage.ClassINET}); err != nil {
		return reply{}, err
	}
	q, err := b.Finish()
	if err != nil {
		return reply{}, err
	}
	d := net.Dialer{Timeout: askTimeout}
	conn, err := d.DialContext(ctx, "udp", server)
	if err != nil {
		return reply{}, err
	}
	defer conn.Close()
	deadline := time.Now().Add(askTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn.SetDeadline(deadline)
	if _, err := conn.Write(q); err != nil {
		return reply{}, err
	}
	buf := make([]byte, 512)
	for {
		k, err := conn.Read(buf)
		if err != nil {
			return reply{}, err
		}
		var pr dnsmessage.Parser
		h, err := pr.Start(buf[:k])
		if err != nil {
			return reply{}, err
		}
		if h.ID == id {
			r := reply{rcode: h.RCode}
			if !h.Truncated {
				r.cnames, r.hasAddr = answerSection(&pr)
			}
			return r, nil
		}
	}
}

// answerSection reads the CNAME and address records of an answer section;
// a section that does not parse counts as what was read before it.
func answerSection(p *dnsmessage.Parser) (cnames map[string]string, hasAddr bool) {
	if err := p.SkipAllQuestions(); err != nil {
		return nil, false
	}
	for {
		h, err := p.AnswerHeader()
		if err != nil {
			return cnames, hasAddr
		}
		switch h.Type {
		case dnsmessage.TypeCNAME:
			c, err := p.CNAMEResource()
			if err != nil {
				return cnames, hasAddr
			}
			if cnames == nil {
				cnames = map[string]string{}
			}
			cnames[strings.ToLower(h.Name.String())] = strings.ToLower(c.CNAME.String())
			continue
		case dnsmessage.TypeA, dnsmessage.TypeAAAA:
			hasAddr = true
		}
		if err := p.SkipAnswer(); err != nil {
			return cnames, hasAddr
		}
	}
}

// FirstNameserver returns the first "nameserver" entry of a resolv.conf
// file, or "" when it has none.
func FirstNameserver(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[0] == "nameserver" {
			return f[1], nil
		}
	}
	return "", nil
}
