package resolve

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
)

func TestFirstNameserver(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ conf, want string }{
		{"# generated\nsearch corp.example\nnameserver 10.0.0.2\nnameserver 10.0.0.3\n", "10.0.0.2"},
		{"; comment\n  nameserver   fe80::1%eth0  # trailing\n", "fe80::1%eth0"},
		{"#nameserver 10.0.0.9\nnameserver\noptions ndots:2\n", ""},
		{"", ""},
	}
	for i, tc := range cases {
		path := filepath.Join(dir, "resolv.conf")
		if err := os.WriteFile(path, []byte(tc.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := FirstNameserver(path)
		if err != nil || got != tc.want {
			t.Errorf("case %d: got %q, %v; want %q", i, got, err, tc.want)
		}
	}
	if _, err := FirstNameserver(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing resolv.conf gave no error")
	}
}

// TestExchangeRcode asks the loopback DNS fixture the one question askAgain
// asks and reads the answer's rcode.
func TestExchangeRcode(t *testing.T) {
	d, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cases := []struct {
		name  string
		qtype dnsmessage.Type
		want  dnsmessage.RCode
	}{
		{"nx.invalid.", dnsmessage.TypeA, dnsmessage.RCodeNameError},
		{"empty.invalid.", dnsmessage.TypeA, dnsmessage.RCodeSuccess},
		{"v6.invalid.", dnsmessage.TypeA, dnsmessage.RCodeSuccess},
		{"app.invalid.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess},
		{"servfail.invalid.", dnsmessage.TypeA, dnsmessage.RCodeServerFailure},
	}
	for _, tc := range cases {
		got, err := Query(ctx, d.Addr, tc.name, tc.qtype)
		if err != nil || got != tc.want {
			t.Errorf("%s %s: got %v, %v; want %v", tc.name, tc.qtype, got, err, tc.want)
		}
	}
	// silent.invalid never answers: the context's deadline ends the wait.
	sctx, scancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer scancel()
	start := time.Now()
	if _, err := Query(sctx, d.Addr, "silent.invalid.", dnsmessage.TypeA); err == nil {
		t.Error("silent.invalid: no error")
	}
	if el := time.Since(start); el > askTimeout {
		t.Errorf("silent.invalid: waited %v, past the context's deadline", el)
	}
	if got := d.Queries(); len(got) != len(cases)+1 {
		t.Errorf("the fixture saw %d queries, want %d (one per exchange): %q", len(got), len(cases)+1, got)
	}
}

// TestExchangeRcodeSkipsOtherIDs: a reply to another query (one that timed
// out earlier) is skipped; the reply with the query's ID counts; a reply that
// is not DNS at all is an error.
func TestExchangeRcodeSkipsOtherIDs(t *testing.T) {
	for _, garbage := range []bool{false, true} {
		pc, err := net.ListenPacket("udp4", fixture.Loopback4+":0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		go func() {
			buf := make([]byte, 512)
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				return
			}
			if garbage {
				pc.WriteTo([]byte{1}, addr)
				return
			}
			reply := func(id uint16, rc dnsmessage.RCode) {
				m := dnsmessage.Message{Header: dnsmessage.Header{ID: id, Response: true, RCode: rc}}
				b, _ := m.Pack()
				pc.WriteTo(b, addr)
			}
			reply(h.ID+1, dnsmessage.RCodeSuccess)
			reply(h.ID, dnsmessage.RCodeNameError)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := Query(ctx, pc.LocalAddr().String(), "nx.invalid.", dnsmessage.TypeA)
		cancel()
		switch {
		case garbage && err == nil:
			t.Errorf("garbage reply: got %v, want an error", got)
		case !garbage && (err != nil || got != dnsmessage.RCodeNameError):
			t.Errorf("got %v, %v; want NXDOMAIN from the reply with the query's ID", got, err)
		}
	}
}
