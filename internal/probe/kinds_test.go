package probe_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/pgwire"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/rediswire"
)

// serve answers every connection on a loopback port with answer.
func serve(t *testing.T, answer func(br *bufio.Reader, c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				answer(bufio.NewReader(c), c)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestKindsWindows: a Redis or PostgreSQL server that takes the
// connection and says nothing ends the probe by its read window
// (headers_timeout, "no answer"), never hangs; one that sends half a reply
// and stalls ends on the body (body_timeout); the pipelined replies are
// read in order.
func TestKindsWindows(t *testing.T) {
	// Holding means reading until the probe closes its side.
	silent := serve(t, func(br *bufio.Reader, c net.Conn) { io.Copy(io.Discard, br) })
	half := serve(t, func(br *bufio.Reader, c net.Conn) {
		br.ReadString('\n')
		c.Write([]byte("+PO"))
		io.Copy(io.Discard, br)
	})
	pipelined := serve(t, func(br *bufio.Reader, c net.Conn) {
		// AUTH (4 lines), SELECT (5), PING (3): answer once all came.
		for range 12 {
			br.ReadString('\n')
		}
		c.Write([]byte("+OK\r\n+OK\r\n-LOADING Redis is loading the dataset in memory\r\n"))
	})
	for _, tc := range []struct {
		url    string
		reason classify.Reason
		text   string
	}{
		{"redis://" + silent, classify.HeadersTimeout, "no answer within --read-timeout"},
		{"postgres://" + silent, classify.HeadersTimeout, "no answer within --read-timeout"},
		// A login (a password in the URL) keeps the same windows.
		{"postgres://u:pw@" + silent, classify.HeadersTimeout, "no answer within --read-timeout"},
		{"redis://" + half, classify.BodyTimeout, "--read-timeout"},
		{"redis://u:pw@" + pipelined + "/4", rediswire.Loading, `Redis answered PING with "-LOADING`},
	} {
		start := time.Now()
		res := probe.Run(t.Context(), opts(t, tc.url, "", nil))
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%s: took %s", tc.url, took)
		}
		if res.Reason != tc.reason || !strings.Contains(res.Error, tc.text) {
			t.Errorf("%s: %s %q, want %s %q", tc.url, res.Reason, res.Error, tc.reason, tc.text)
		}
		if strings.Contains(res.URL, "pw") {
			t.Errorf("%s: the URL shown is %s", tc.url, res.URL)
		}
	}
}

// TestPostgresLoginHostile: a login (a password in the URL) to a server
// that is not PostgreSQL, or that sends a message past any a login reads,
// fails with postgres_protocol within the windows, naming no password.
func TestPostgresLoginHostile(t *testing.T) {
	banner := serve(t, func(br *bufio.Reader, c net.Conn) {
		c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
		io.Copy(io.Discard, br)
	})
	huge := serve(t, func(br *bufio.Reader, c net.Conn) {
		// An ErrorResponse claiming a gigabyte, then nothing.
		c.Write([]byte{'E', 0x40, 0, 0, 0})
		io.Copy(io.Discard, br)
	})
	closes := serve(t, func(br *bufio.Reader, c net.Conn) {
		br.ReadByte()
	})
	for _, addr := range []string{banner, huge, closes} {
		url := "postgres://app:s3cretpw@" + addr + "/db"
		start := time.Now()
		res := probe.Run(t.Context(), opts(t, url, "", nil))
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s: took %s", addr, took)
		}
		if res.Reason != pgwire.Protocol || strings.Contains(res.Error+res.URL, "s3cretpw") || strings.Contains(res.Error, "failed to connect to") {
			t.Errorf("%s: %s %s %q", addr, res.Outcome, res.Reason, res.Error)
		}
		t.Logf("%s: %s %q", addr, res.Reason, res.Error)
	}
}

// TestPostgresConnectTimeout: a URL's connect_timeout shorter than
// --connect-timeout is the connect window, and the error names it.
func TestPostgresConnectTimeout(t *testing.T) {
	b, err := fixture.NewBacklog(t)
	if err != nil {
		t.Skip(err)
	}
	o := opts(t, "postgres://"+b.Addr+"/db?connect_timeout=1", "", nil)
	o.ConnectTimeout, o.MaxTime = 30*time.Second, 30*time.Second
	start := time.Now()
	res := probe.Run(t.Context(), o)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s", took)
	}
	if res.Reason != classify.ConnectTimeout || !strings.Contains(res.Error, "connect_timeout") {
		t.Errorf("%s %q, want connect_timeout named", res.Reason, res.Error)
	}
}
