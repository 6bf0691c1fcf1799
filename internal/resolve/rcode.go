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
	n, err := dnsmessage.NewName(name)
	if err != nil {
		return 0, err
	}
	id := uint16(rand.Uint32())
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), dnsmessage.Header{ID: id, RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		return 0, err
	}
	if err := b.Question(dnsmessage.Question{Name: n, Type: qtype, Class: dnsmessage.ClassINET}); err != nil {
		return 0, err
	}
	q, err := b.Finish()
	if err != nil {
		return 0, err
	}
	d := net.Dialer{Timeout: askTimeout}
	conn, err := d.DialContext(ctx, "udp", server)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	deadline := time.Now().Add(askTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn.SetDeadline(deadline)
	if _, err := conn.Write(q); err != nil {
		return 0, err
	}
	buf := make([]byte, 512)
	for {
		k, err := conn.Read(buf)
		if err != nil {
			return 0, err
		}
		var pr dnsmessage.Parser
		h, err := pr.Start(buf[:k])
		if err != nil {
			return 0, err
		}
		if h.ID == id {
			return h.RCode, nil
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
