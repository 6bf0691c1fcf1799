package drain

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"

	input "github.com/healthctl/healthctl/internal/target"
)

// blackHole listens on addr:port with a backlog of 0 and never accepts,
// then fills the queue: a further connect there is never answered (a real
// connect timeout, on loopback).
func blackHole(t *testing.T, addr string, port int) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skip("socket:", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	sa := &syscall.SockaddrInet4{Port: port}
	copy(sa.Addr[:], net.ParseIP(addr).To4())
	if err := syscall.Bind(fd, sa); err != nil {
		t.Skip("bind:", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Skip("listen:", err)
	}
	target := net.JoinHostPort(addr, strconv.Itoa(port))
	for i := 0; i < 4; i++ {
		c, err := net.DialTimeout("tcp4", target, 100*time.Millisecond)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return // the queue is full: the next connect hangs
			}
			t.Skip("filling the backlog:", err)
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("the backlog never filled; no black hole on this machine")
}

// TestInflightResolveBlackHole: the first --resolve address never answers;
// the racer tries the next after RFC 8305's attempt delay instead of
// waiting out the connect window on the first.
func TestInflightResolveBlackHole(t *testing.T) {
	var s seen
	srv := httptest.NewServer(http.HandlerFunc(s.handler))
	defer srv.Close()
	_, ps, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(ps)
	blackHole(t, "127.0.0.3", port)
	o := optionsFor(t, "http://svc.invalid:"+ps+"/slow", func(in *input.Input) {
		in.Resolve = []string{"svc.invalid:" + ps + ":127.0.0.3,127.0.0.1"}
	})
	start := time.Now()
	if r := inflightOnce(t, o); r.Status != 200 || r.Err != "" {
		t.Fatalf("in-flight request: %+v", r)
	}
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Errorf("took %v: the silent address held up the next (want about 250ms)", took)
	}
}
