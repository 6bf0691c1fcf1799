//go:build unix

package probe_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/pgwire"
	"github.com/healthctl/healthctl/internal/probe"
)

// serveUnix answers every connection on a Unix socket at path with
// answer, as serve does on a loopback port.
func serveUnix(t *testing.T, path string, answer func(br *bufio.Reader, c net.Conn)) {
	t.Helper()
	ln, err := net.Listen("unix", path)
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
}

// TestUnixSockets: postgres:///DB?host=/DIR (libpq's form: the socket
// DIR/.s.PGSQL.PORT) and unix:///PATH, redis+socket:///PATH (Redis over
// its socket) dial the socket: no DNS stage, the socket as the address,
// no SSLRequest over it whatever sslmode says (libpq asks for none), the
// db parameter as SELECT's database; a socket that is not there is
// conn_refused, one that never answers ends in the read window.
func TestUnixSockets(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var firstPG []byte
	serveUnix(t, filepath.Join(dir, ".s.PGSQL.5432"), func(br *bufio.Reader, c net.Conn) {
		var n uint32
		if binary.Read(br, binary.BigEndian, &n) != nil || n < 8 || n > 10000 {
			return
		}
		msg := make([]byte, n-4)
		if _, err := io.ReadFull(br, msg); err != nil {
			return
		}
		mu.Lock()
		firstPG = msg
		mu.Unlock()
		// AuthenticationSASL, SCRAM-SHA-256: pg_isready's "accepting".
		c.Write([]byte("R\x00\x00\x00\x17\x00\x00\x00\x0aSCRAM-SHA-256\x00\x00"))
		io.Copy(io.Discard, br)
	})
	serveUnix(t, filepath.Join(dir, ".s.PGSQL.5433"), func(br *bufio.Reader, c net.Conn) { io.Copy(io.Discard, br) })
	var cmds []string
	redisSock := filepath.Join(dir, "redis.sock")
	serveUnix(t, redisSock, func(br *bufio.Reader, c net.Conn) {
		for {
			args, err := readArray(br)
			if err != nil {
				return
			}
			mu.Lock()
			cmds = append(cmds, strings.ToUpper(args[0]))
			mu.Unlock()
			reply := "+OK\r\n"
			switch strings.ToUpper(args[0]) {
			case "PING":
				reply = "+PONG\r\n"
			case "INFO":
				reply = bulk("# Server\r\nredis_mode:standalone\r\n")
			case "CLUSTER":
				reply = "-ERR This instance has cluster support disabled\r\n"
			}
			c.Write([]byte(reply))
		}
	})

	for _, tc := range []struct {
		url     string
		reason  classify.Reason
		address string
	}{
		{"postgres:///app?host=" + dir, classify.OK, ".s.PGSQL.5432"},
		{"postgresql://app@/app?host=" + dir + "&port=5432&sslmode=require", classify.OK, ".s.PGSQL.5432"},
		{"postgres://:5433/app?host=" + dir, classify.HeadersTimeout, ".s.PGSQL.5433"},
		{"postgres:///app?host=" + dir + "&port=5499", classify.ConnRefused, ".s.PGSQL.5499"},
		{"unix://" + redisSock + "?db=3", classify.OK, "redis.sock"},
		{"redis+socket://" + redisSock, classify.OK, "redis.sock"},
		{"unix://" + filepath.Join(dir, "gone.sock"), classify.ConnRefused, "gone.sock"},
	} {
		mu.Lock()
		firstPG, cmds = nil, nil
		mu.Unlock()
		res := probe.Run(t.Context(), opts(t, tc.url, "", nil))
		if res.Reason != tc.reason || !strings.HasPrefix(res.Address, dir+"/") || !strings.HasSuffix(res.Address, tc.address) {
			t.Errorf("%s: %s %q at %q, want %s at %s", tc.url, res.Reason, res.Error, res.Address, tc.reason, tc.address)
		}
		if res.Timings.Has(probe.PhaseDNS) {
			t.Errorf("%s: a dns phase over a socket: %v", tc.url, res.Timings)
		}
		mu.Lock()
		if strings.HasPrefix(tc.url, "postgres") && tc.reason == classify.OK {
			// The startup message (protocol 3.0), never an SSLRequest.
			if len(firstPG) < 4 || binary.BigEndian.Uint32(firstPG) != 3<<16 {
				t.Errorf("%s: the first message was %q, want the startup message", tc.url, firstPG)
			}
			if pg, ok := res.Answer.(*pgwire.Reply); !ok || pg.Auth != "sasl" || pg.SSL {
				t.Errorf("%s: %+v", tc.url, res.Answer)
			}
		}
		if strings.Contains(tc.url, "db=3") && strings.Join(cmds, " ") != "SELECT PING INFO CLUSTER" {
			t.Errorf("%s: the server got %v, want SELECT (db=3) then PING", tc.url, cmds)
		}
		mu.Unlock()
	}
	// --all-addresses: a socket is one address, and no name is looked up.
	o := opts(t, "unix://"+redisSock, "127.0.0.1:1", nil)
	o.AllAddresses = true
	if res := probe.Run(t.Context(), o); res.Reason != classify.OK || len(res.Addresses) != 0 {
		t.Errorf("--all-addresses: %s %q, %d addresses", res.Reason, res.Error, len(res.Addresses))
	}
}
