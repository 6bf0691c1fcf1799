//go:build linux && (amd64 || arm64)

package eyeballs

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/fixture"
)

// The oracle for dialRaw is net itself: every way a dial, a read or a
// write can end, done once through net.Dialer and once through dialRaw
// against the same real socket, must give the same error text (the local
// port aside, which differs by connection), the same errors.Is answers
// and the same timeout flag. The one difference allowed: after Close, an
// error names no local address (dialRaw asks the kernel for it only when
// an error needs it, and a closed socket cannot be asked).

type dialFunc func(ctx context.Context, ap netip.AddrPort) (net.Conn, error)

func netDial(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	d := net.Dialer{KeepAlive: -1}
	return d.DialContext(ctx, network(ap.Addr()), ap.String())
}

func rawDial(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	c, err, ok := dialRaw(ctx, ap.Addr(), ap.Port())
	if !ok {
		panic("dialRaw cannot dial " + ap.String())
	}
	return c, err
}

var localPort = regexp.MustCompile(`(127\.0\.0\.1|\[::1\]):\d+->`)

// errShape is what the classifier and the output see of an error.
type errShape struct {
	text                                    string
	refused, reset, pipe, closed, deadline  bool
	canceled, ctxDeadline, timeout, outTime bool
}

func shape(err error) errShape {
	if err == nil {
		return errShape{text: "<nil>"}
	}
	var ne net.Error
	return errShape{
		text:        localPort.ReplaceAllString(err.Error(), "$1:PORT->"),
		refused:     errors.Is(err, syscall.ECONNREFUSED),
		reset:       errors.Is(err, syscall.ECONNRESET),
		pipe:        errors.Is(err, syscall.EPIPE),
		closed:      errors.Is(err, net.ErrClosed),
		deadline:    errors.Is(err, os.ErrDeadlineExceeded),
		canceled:    errors.Is(err, context.Canceled),
		ctxDeadline: errors.Is(err, context.DeadlineExceeded),
		timeout:     errors.As(err, &ne) && ne.Timeout(),
		outTime:     OutOfTime(err),
	}
}

func closedPort(t *testing.T, ip string) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("no %s: %v", ip, err)
	}
	ap := netip.MustParseAddrPort(l.Addr().String())
	l.Close()
	return ap
}

// serve accepts one connection at a time and hands it to do.
func serve(t *testing.T, ip string, do func(net.Conn)) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("no %s: %v", ip, err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go do(c)
		}
	}()
	return netip.MustParseAddrPort(l.Addr().String())
}

func TestDialRawErrorsAreNets(t *testing.T) {
	backlog, err := fixture.NewBacklog(t)
	if err != nil {
		t.Skip(err)
	}
	hung := netip.MustParseAddrPort(backlog.Addr)
	reset := serve(t, "127.0.0.1", func(c net.Conn) {
		// Reset once the client has sent a byte: the connect is over.
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		c.Read(make([]byte, 1))
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	})
	closing := serve(t, "127.0.0.1", func(c net.Conn) { c.Close() })
	answering := serve(t, "127.0.0.1", func(c net.Conn) {
		defer c.Close()
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"))
		io.Copy(io.Discard, c)
	})
	silent := serve(t, "127.0.0.1", func(c net.Conn) {
		defer c.Close()
		io.Copy(io.Discard, c)
	})

	// Each case returns the error its step ends with, and the data read.
	type step func(t *testing.T, dial dialFunc) (string, error)
	dialOnly := func(ap netip.AddrPort, ctx func() (context.Context, context.CancelFunc)) step {
		return func(t *testing.T, dial dialFunc) (string, error) {
			c, cancel := ctx()
			defer cancel()
			conn, err := dial(c, ap)
			if conn != nil {
				conn.Close()
			}
			return "", err
		}
	}
	within := func(d time.Duration) func() (context.Context, context.CancelFunc) {
		return func() (context.Context, context.CancelFunc) { return context.WithTimeout(context.Background(), d) }
	}
	cancelAfter := func(d time.Duration) func() (context.Context, context.CancelFunc) {
		return func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(d, cancel)
			return ctx, cancel
		}
	}
	ended := func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	}
	connected := func(ap netip.AddrPort, then func(c net.Conn) (string, error)) step {
		return func(t *testing.T, dial dialFunc) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			c, err := dial(ctx, ap)
			if err != nil {
				t.Fatalf("dial %s: %v", ap, err)
			}
			defer c.Close()
			if c.RemoteAddr().String() != ap.String() {
				t.Errorf("RemoteAddr %v, want %v", c.RemoteAddr(), ap)
			}
			if la, ok := c.LocalAddr().(*net.TCPAddr); !ok || !la.IP.IsLoopback() || la.Port == 0 {
				t.Errorf("LocalAddr %v", c.LocalAddr())
			}
			c.SetDeadline(time.Now().Add(2 * time.Second))
			return then(c)
		}
	}
	readAll := func(c net.Conn) (string, error) {
		b, err := io.ReadAll(c)
		return string(b), err
	}
	cases := []struct {
		name string
		step step
	}{
		{"refused", dialOnly(closedPort(t, "127.0.0.1"), within(2*time.Second))},
		{"refused v6", dialOnly(closedPort(t, "::1"), within(2*time.Second))},
		{"connect deadline", dialOnly(hung, within(150*time.Millisecond))},
		{"connect cancelled", dialOnly(hung, cancelAfter(150*time.Millisecond))},
		{"context already ended", dialOnly(hung, ended)},
		{"read reset", connected(reset, func(c net.Conn) (string, error) {
			c.Write([]byte("x"))
			return readAll(c)
		})},
		{"read to EOF", connected(closing, readAll)},
		{"answer then EOF", connected(answering, func(c net.Conn) (string, error) {
			c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
			b := make([]byte, 64)
			n, err := io.ReadAtLeast(c, b, len("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"))
			return string(b[:n]), err
		})},
		{"read deadline", connected(silent, func(c net.Conn) (string, error) {
			c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			return readAll(c)
		})},
		{"write after reset", connected(reset, func(c net.Conn) (string, error) {
			c.Write([]byte("x"))
			time.Sleep(50 * time.Millisecond) // the RST is in
			var err error
			for i := 0; i < 10 && err == nil; i++ {
				_, err = c.Write(make([]byte, 1<<16))
			}
			return "", err
		})},
		{"close write then read", connected(answering, func(c net.Conn) (string, error) {
			c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
			if err := c.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
				return "", err
			}
			return readAll(c) // the server ends its copy and closes
		})},
		{"read after close", connected(silent, func(c net.Conn) (string, error) {
			c.Close()
			_, err := c.Read(make([]byte, 1))
			if err == nil {
				return "", nil
			}
			// The one difference allowed: no local address once closed.
			return "", errors.New(localPort.ReplaceAllString(err.Error(), "$1:PORT->"))
		})},
		{"close twice", connected(silent, func(c net.Conn) (string, error) {
			c.Close()
			return "", c.Close()
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantData, wantErr := tc.step(t, netDial)
			gotData, gotErr := tc.step(t, rawDial)
			want, got := shape(wantErr), shape(gotErr)
			if tc.name == "read after close" || tc.name == "close twice" {
				want.text = localPort.ReplaceAllString(want.text, "") // "read tcp4 127.0.0.1:PORT->" → "read tcp4 "
				got.text = localPort.ReplaceAllString(got.text, "")
			}
			if tc.name == "connect deadline" {
				// net says either os.ErrDeadlineExceeded (the poller's
				// deadline) or its own timeout (the context's), as the two
				// timers race; dialRaw says the second whenever the
				// deadline has passed. The text is the same.
				if !got.ctxDeadline || !(want.deadline || want.ctxDeadline) {
					t.Errorf("dialRaw: %+v\n     net: %+v", got, want)
				}
				got.deadline, got.ctxDeadline, want.deadline, want.ctxDeadline = false, false, false, false
			}
			if got != want || gotData != wantData {
				t.Errorf("dialRaw: %+v %q\n     net: %+v %q", got, gotData, want, wantData)
			}
		})
	}
}

// TestDialRawConnectHonoursTheDeadline: a connect that is never answered
// ends at the context's deadline, not later.
func TestDialRawConnectHonoursTheDeadline(t *testing.T) {
	backlog, err := fixture.NewBacklog(t)
	if err != nil {
		t.Skip(err)
	}
	ap := netip.MustParseAddrPort(backlog.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	c, err := rawDial(ctx, ap)
	if c != nil || !OutOfTime(err) {
		t.Fatalf("dial of a full backlog: %v, %v; want out of time", c, err)
	}
	if took := time.Since(t0); took > 5*time.Second {
		t.Errorf("took %v with a 200ms deadline", took)
	}
}

// TestDialRawZoneFallsBack: a zoned address is left to net's dialer.
func TestDialRawZoneFallsBack(t *testing.T) {
	if _, _, ok := dialRaw(context.Background(), netip.MustParseAddr("fe80::1%lo"), 1); ok {
		t.Fatal("dialRaw took a zoned address")
	}
}

// TestDialRawNoDelay: TCP_NODELAY is off for a probe's one short
// request and on before any write Nagle could hold back (a second write,
// a long first one), as net has it on from the start.
func TestDialRawNoDelay(t *testing.T) {
	ap := serve(t, "127.0.0.1", func(c net.Conn) {
		defer c.Close()
		io.Copy(io.Discard, c)
	})
	noDelay := func(c net.Conn) int {
		sc, err := c.(*rawConn).f.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		v := -1
		sc.Control(func(fd uintptr) { v, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY) })
		return v
	}
	dial := func() net.Conn {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := rawDial(ctx, ap)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c := dial()
	c.Write(make([]byte, noDelayAfter))
	if v := noDelay(c); v != 0 {
		t.Errorf("after one short write TCP_NODELAY = %d, want 0", v)
	}
	c.Write([]byte("x"))
	if v := noDelay(c); v == 0 {
		t.Errorf("after a second write TCP_NODELAY = %d, want on", v)
	}
	c = dial()
	c.Write(make([]byte, noDelayAfter+1))
	if v := noDelay(c); v == 0 {
		t.Errorf("after a long first write TCP_NODELAY = %d, want on", v)
	}
}
