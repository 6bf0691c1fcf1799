package probe_test

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/pgwire"
	"github.com/healthctl/healthctl/internal/probe"
)

// pgMessage reads one untyped message (SSLRequest, startup): its body.
func pgMessage(br *bufio.Reader) ([]byte, error) {
	var n uint32
	if err := binary.Read(br, binary.BigEndian, &n); err != nil || n < 8 || n > 10000 {
		return nil, io.ErrUnexpectedEOF
	}
	b := make([]byte, n-4)
	_, err := io.ReadFull(br, b)
	return b, err
}

// isSSLRequest says body is an SSLRequest's.
func isSSLRequest(b []byte) bool { return len(b) == 4 && binary.BigEndian.Uint32(b) == 80877103 }

const (
	saslRequest = "R\x00\x00\x00\x17\x00\x00\x00\x0aSCRAM-SHA-256\x00\x00"
)

// hbaNoSSL is the ErrorResponse of pg_hba.conf's hostssl to a session in
// clear.
var hbaNoSSL = func() string {
	f := "SFATAL\x00C28000\x00Mno pg_hba.conf entry for host \"127.0.0.1\", no encryption\x00\x00"
	b := binary.BigEndian.AppendUint32([]byte("E"), uint32(4+len(f)))
	return string(b) + f
}()

// TestPostgresSSLFallbacks: libpq's (and pgconn's) second try on the same
// host. sslmode=prefer: a handshake that fails, or a session refused over
// TLS, is tried again in clear on a new connection; sslmode=allow: a
// session refused in clear is tried again over TLS. A wrong password is
// not tried again (pgconn stops at 28P01). Every try in the probe's
// windows.
func TestPostgresSSLFallbacks(t *testing.T) {
	pki, err := pkifix.NewPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pki.ServerCertificate(pkifix.CertGood)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	note := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
	// breaksTLS: S to the SSLRequest, then the connection closed; in
	// clear, an authentication request.
	breaksTLS := serve(t, func(br *bufio.Reader, c net.Conn) {
		b, err := pgMessage(br)
		if err != nil {
			return
		}
		if isSSLRequest(b) {
			note("ssl")
			c.Write([]byte("S"))
			return
		}
		note("clear")
		c.Write([]byte(saslRequest))
		io.Copy(io.Discard, br)
	})
	// sslOnly: pg_hba.conf's hostssl: the session refused in clear,
	// an authentication request over TLS.
	sslOnly := serve(t, func(br *bufio.Reader, c net.Conn) {
		b, err := pgMessage(br)
		if err != nil {
			return
		}
		if !isSSLRequest(b) {
			note("clear")
			c.Write([]byte(hbaNoSSL))
			return
		}
		note("ssl")
		c.Write([]byte("S"))
		tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
		tbr := bufio.NewReader(tc)
		if _, err := pgMessage(tbr); err != nil {
			return
		}
		tc.Write([]byte(saslRequest))
		io.Copy(io.Discard, tbr)
	})
	for _, tc := range []struct {
		url    string
		reason classify.Reason
		seen   string
		ssl    bool
	}{
		{"postgres://" + breaksTLS + "/db?sslmode=prefer", classify.OK, "ssl clear", false},
		{"postgres://" + breaksTLS + "/db?sslmode=require", classify.TLSHandshakeFailure, "ssl", true},
		{"postgres://" + sslOnly + "/db?sslmode=allow", classify.OK, "clear ssl", true},
		{"postgres://" + sslOnly + "/db?sslmode=disable", classify.OK, "clear", false},
		// With a password the refusal is postgres_auth, allow's TLS
		// try is not: the same server, the login over TLS.
		{"postgres://u:pw@" + sslOnly + "/db?sslmode=disable", pgwire.AuthRefused, "clear", false},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		res := probe.Run(t.Context(), opts(t, tc.url, "", pki))
		mu.Lock()
		got := strings.Join(seen, " ")
		mu.Unlock()
		if res.Reason != tc.reason || got != tc.seen {
			t.Errorf("%s: %s %q, the server saw %q; want %s, %q", tc.url, res.Reason, res.Error, got, tc.reason, tc.seen)
		}
		if pg, ok := res.Answer.(*pgwire.Reply); ok && pg.SSL != tc.ssl {
			t.Errorf("%s: ssl %v, want %v", tc.url, pg.SSL, tc.ssl)
		}
	}
}

// TestPostgresHostWindows: a libpq URL whose first hosts hang — one never
// accepts the connection (the connect window closes), one accepts and
// never answers (the read window) — moves on to the next host, as libpq
// does with connect_timeout, within --max-time; the last host's window
// ends the probe.
func TestPostgresHostWindows(t *testing.T) {
	b, err := fixture.NewBacklog(t)
	if err != nil {
		t.Skip(err)
	}
	silent := serve(t, func(br *bufio.Reader, c net.Conn) { io.Copy(io.Discard, br) })
	answers := serve(t, func(br *bufio.Reader, c net.Conn) {
		if _, err := pgMessage(br); err != nil {
			return
		}
		c.Write([]byte(saslRequest))
		io.Copy(io.Discard, br)
	})
	for _, tc := range []struct {
		hosts   string
		reason  classify.Reason
		address string
	}{
		{b.Addr + "," + silent + "," + answers, classify.OK, answers},
		{silent + "," + answers, classify.OK, answers},
		{answers + "," + silent, classify.OK, answers},
		{answers + "," + b.Addr, classify.OK, answers},
		{b.Addr + "," + silent, classify.HeadersTimeout, silent},
		{silent + "," + b.Addr, classify.ConnectTimeout, b.Addr},
	} {
		o := opts(t, "postgres://"+tc.hosts+"/db", "", nil)
		o.ConnectTimeout, o.ReadTimeout, o.MaxTime = 300*time.Millisecond, 300*time.Millisecond, 20*time.Second
		res := probe.Run(t.Context(), o)
		if res.Reason != tc.reason || res.Address != tc.address {
			t.Errorf("%s: %s %q at %s, want %s at %s", tc.hosts, res.Reason, res.Error, res.Address, tc.reason, tc.address)
		}
	}
	// --max-time bounds them all: it closes on the second host.
	o := opts(t, "postgres://"+silent+","+silent+","+answers+"/db", "", nil)
	o.ConnectTimeout, o.ReadTimeout, o.MaxTime = 300*time.Millisecond, 5*time.Second, 600*time.Millisecond
	if res := probe.Run(t.Context(), o); res.Outcome == classify.Pass || !strings.Contains(res.Error, "--max-time") {
		t.Errorf("--max-time: %s %s %q", res.Outcome, res.Reason, res.Error)
	}
}
