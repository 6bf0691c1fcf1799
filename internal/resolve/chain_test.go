package resolve

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
)

// TestFollowChain: the CNAME chains an answer (and the answers asked again
// where one stopped) can hold, and what followChain says of each.
func TestFollowChain(t *testing.T) {
	ok := dnsmessage.RCodeSuccess
	// long is an endless chain x0 → x1 → …, each answer giving step links.
	long := func(from, step int) reply {
		r := reply{rcode: ok, cnames: map[string]string{}}
		for i := from; i < from+step; i++ {
			r.cnames[xName(i)] = xName(i + 1)
		}
		return r
	}
	cases := []struct {
		name  string
		first reply
		again map[string]reply
		want  string
	}{
		{"no alias", reply{rcode: ok}, nil, ""},
		{"alias to an address", reply{rcode: ok, cnames: map[string]string{"a.": "b."}, hasAddr: true}, nil, ""},
		{"loop in one answer", reply{rcode: ok, cnames: map[string]string{"a.": "b.", "b.": "a."}}, nil,
			"CNAME loop: a → b → a"},
		{"self loop", reply{rcode: ok, cnames: map[string]string{"a.": "a."}}, nil, "CNAME loop: a → a"},
		{"loop across answers", reply{rcode: ok, cnames: map[string]string{"a.": "b."}},
			map[string]reply{"b.": {rcode: ok, cnames: map[string]string{"b.": "c.", "c.": "b."}}},
			"CNAME loop: a → b → c → b"},
		{"alias to a name without records", reply{rcode: ok, cnames: map[string]string{"a.": "b."}},
			map[string]reply{"b.": {rcode: ok}}, ""},
		{"alias to a missing name", reply{rcode: ok, cnames: map[string]string{"a.": "b."}},
			map[string]reply{"b.": {rcode: dnsmessage.RCodeNameError}}, ""},
		{"alias whose target fails", reply{rcode: ok, cnames: map[string]string{"a.": "b."}}, nil, ""},
		{"chain of exactly the limit", long(0, MaxCNAMEs), map[string]reply{xName(MaxCNAMEs): {rcode: ok, hasAddr: true}}, ""},
		{"chain past the limit in one answer", long(0, MaxCNAMEs+1), nil,
			"CNAME chain longer than 16: x0 → … → x17"},
		{"chain past the limit across answers", long(0, 8), map[string]reply{xName(8): long(8, 8), xName(16): long(16, 8)},
			"CNAME chain longer than 16: x0 → … → x17"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := "a."
			if strings.HasPrefix(tc.name, "chain") {
				start = xName(0)
			}
			asked := 0
			got := followChain(start, tc.first, func(n string) (reply, error) {
				asked++
				if asked > MaxCNAMEs {
					t.Fatalf("asked %d times", asked)
				}
				r, ok := tc.again[n]
				if !ok {
					return reply{}, errors.New("no answer")
				}
				return r, nil
			})
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func xName(i int) string { return "x" + strconv.Itoa(i) + "." }

// TestLookupCNAMEChain resolves the DNS fixture's loop and endless chain:
// each is named, and classify calls it dns_no_address (the name exists,
// and the server's NOERROR answer reaches no address).
func TestLookupCNAMEChain(t *testing.T) {
	d, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ host, want string }{
		{"a.loop.invalid", "CNAME loop: a.loop.invalid → b.loop.invalid → a.loop.invalid"},
		{"b.loop.invalid", "CNAME loop: b.loop.invalid → a.loop.invalid → b.loop.invalid"},
		{"c0.chain.invalid", "CNAME chain longer than 16: c0.chain.invalid → … → c17.chain.invalid"},
	}
	for _, network := range []string{"tcp", "tcp4", "tcp6"} {
		for _, tc := range cases {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c := &Client{Server: d.Addr, Network: network}
			addrs, answer, err := c.Lookup(ctx, tc.host)
			cancel()
			var de *net.DNSError
			if !errors.As(err, &de) || len(addrs) != 0 {
				t.Fatalf("%s %s: %v, %v", network, tc.host, addrs, err)
			}
			if de.Err != tc.want || !de.IsNotFound || answer != classify.DNSNoRecords {
				t.Errorf("%s %s: %q (not found %v, answer %v), want %q", network, tc.host, de.Err, de.IsNotFound, answer, tc.want)
			}
			if _, r := classify.Classify(classify.Observation{Stage: classify.StageDNS, Err: err, DNS: answer}); r != classify.DNSNoAddress {
				t.Errorf("%s %s: reason %s", network, tc.host, r)
			}
		}
	}
}
