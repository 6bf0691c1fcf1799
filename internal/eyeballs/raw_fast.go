//go:build linux && (amd64 || arm64)

package eyeballs

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// dialRaw connects to one address as net.Dialer does (a non-blocking
// socket, connect, the runtime's poller waits for the answer, SO_ERROR
// says what it was), without what a probe never uses of it: the address
// text parsed and resolved again, the dial's own contexts and deadline
// set-up when the connect is over at once (loopback), TCP_NODELAY until
// a write could be held back by Nagle (a probe's one short request is
// not: see Write), and the kernel asked for the local address
// (only an error's text needs it: asked then). Four system calls for a
// connect that is answered at once (socket, connect, getpeername, and
// os.NewFile's fcntl) where net makes seven; ten allocations fewer.
// Its errors are net's, word for word (*net.OpError with the same Op,
// Net, addresses and errno: TestDialRawErrorsAreNets holds them to net's
// against the same sockets), so every reason and sentence is the same.
// Two differences: once closed, an error names no local address; and at
// a connect's deadline it always says net's context timeout, where net
// says that or the poller's deadline as its two timers race (one text,
// "i/o timeout"). ok is
// false when it cannot dial addr this way (a zoned IPv6 address): the
// caller dials with net.
func dialRaw(ctx context.Context, addr netip.Addr, port uint16) (c net.Conn, err error, ok bool) {
	if addr.Zone() != "" {
		return nil, nil, false
	}
	addr = addr.Unmap()
	nw := network(addr)
	rap := netip.AddrPortFrom(addr, port)
	if err := ctx.Err(); err != nil {
		return nil, opErr(nw, rap, mapCtx(err)), true
	}
	fd, err := syscall.Socket(family(addr), syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, opErr(nw, rap, os.NewSyscallError("socket", err)), true
	}
	var sa rawSockaddr
	sa.set(rap)
	connected := false
	switch err := sa.connect(fd); err {
	case syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
		// On loopback the handshake is over when connect returns: the
		// peer is known and nothing need wait.
		connected = peerKnown(fd)
	case nil, syscall.EISCONN:
		connected = true
	default:
		syscall.Close(fd)
		return nil, opErr(nw, rap, os.NewSyscallError("connect", err)), true
	}
	rc := &rawConn{f: os.NewFile(uintptr(fd), ""), net: nw, raddr: rap}
	if !connected {
		if err := rc.waitConnected(ctx); err != nil {
			rc.f.Close()
			return nil, opErr(nw, rap, err), true
		}
	}
	return rc, nil, true
}

// opErr is a dial's error as net.Dialer's.
func opErr(nw string, rap netip.AddrPort, e error) error {
	return &net.OpError{Op: "dial", Net: nw, Addr: net.TCPAddrFromAddrPort(rap), Err: e}
}

func family(a netip.Addr) int {
	if a.Is4() {
		return syscall.AF_INET
	}
	return syscall.AF_INET6
}

// rawSockaddr is a socket address for the kernel, built on the stack
// (syscall.Connect's Sockaddr interface puts one on the heap per dial).
type rawSockaddr struct {
	v4  syscall.RawSockaddrInet4
	v6  syscall.RawSockaddrInet6
	is4 bool
}

func (s *rawSockaddr) set(ap netip.AddrPort) {
	p := ap.Port()
	port := [2]byte{byte(p >> 8), byte(p)} // network byte order
	if ap.Addr().Is4() {
		s.is4 = true
		s.v4.Family = syscall.AF_INET
		s.v4.Addr = ap.Addr().As4()
		s.v4.Port = *(*uint16)(unsafe.Pointer(&port[0]))
		return
	}
	s.v6.Family = syscall.AF_INET6
	s.v6.Addr = ap.Addr().As16()
	s.v6.Port = *(*uint16)(unsafe.Pointer(&port[0]))
}

func (s *rawSockaddr) connect(fd int) error {
	ptr, n := unsafe.Pointer(&s.v6), unsafe.Sizeof(s.v6)
	if s.is4 {
		ptr, n = unsafe.Pointer(&s.v4), unsafe.Sizeof(s.v4)
	}
	_, _, e := syscall.Syscall(syscall.SYS_CONNECT, uintptr(fd), uintptr(ptr), n)
	if e != 0 {
		return e
	}
	return nil
}

// peerKnown says the socket is connected: the kernel names its peer.
func peerKnown(fd int) bool {
	var buf syscall.RawSockaddrAny
	n := uint32(unsafe.Sizeof(buf))
	_, _, e := syscall.RawSyscall(syscall.SYS_GETPEERNAME, uintptr(fd), uintptr(unsafe.Pointer(&buf)), uintptr(unsafe.Pointer(&n)))
	return e == 0
}

// waitConnected waits for the connect's answer within ctx, as net's
// netFD.connect does.
func (c *rawConn) waitConnected(ctx context.Context) (ret error) {
	if d, ok := ctx.Deadline(); ok {
		c.f.SetWriteDeadline(d)
		defer c.f.SetWriteDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { c.f.SetWriteDeadline(aLongTimeAgo) })
	defer func() {
		if !stop() && ret == nil {
			// The deadline is poisoned: the connection cannot be used.
			ret = mapCtx(ctx.Err())
		}
	}()
	sc, err := c.f.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	werr := sc.Write(func(fd uintptr) bool {
		// Connected when the kernel knows the peer (one system
		// call); else SO_ERROR says whether the connect failed or
		// is still under way (RawConn.Write asks before it waits).
		if peerKnown(int(fd)) {
			cerr = nil
			return true
		}
		n, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ERROR)
		if err != nil {
			cerr = os.NewSyscallError("getsockopt", err)
			return true
		}
		switch e := syscall.Errno(n); e {
		case 0, syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
			return false // under way: wait for the socket to be writable
		case syscall.EISCONN:
			cerr = nil
			return true
		default:
			cerr = os.NewSyscallError("connect", e)
			return true
		}
	})
	if werr != nil {
		if ctx.Err() != nil {
			return mapCtx(ctx.Err())
		}
		if d, ok := ctx.Deadline(); ok && errors.Is(werr, os.ErrDeadlineExceeded) && !time.Now().Before(d) {
			// The deadline passed; ctx's own timer has yet to say so.
			return mapCtx(context.DeadlineExceeded)
		}
		return c.netErr(werr)
	}
	return cerr
}

var aLongTimeAgo = time.Unix(1, 0)

// mapCtx is net's mapping of a dial context's end: the same texts.
func mapCtx(err error) error {
	switch err {
	case context.Canceled:
		return errCanceled{}
	case context.DeadlineExceeded:
		return errTimeout{}
	}
	return err
}

type errCanceled struct{}

func (errCanceled) Error() string        { return "operation was canceled" }
func (errCanceled) Is(target error) bool { return target == context.Canceled }

type errTimeout struct{}

func (errTimeout) Error() string        { return "i/o timeout" }
func (errTimeout) Timeout() bool        { return true }
func (errTimeout) Temporary() bool      { return true }
func (errTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

// rawConn is a connected TCP socket on the runtime's poller (an *os.File)
// that reads, writes and fails as a *net.TCPConn does.
type rawConn struct {
	f     *os.File
	net   string
	raddr netip.AddrPort

	laddrOnce sync.Once
	laddr     net.Addr

	// wrote says a write was made; noDelay that TCP_NODELAY is set.
	wrote, noDelay atomic.Bool
}

// noDelayAfter is the longest first write that goes out in one segment
// with nothing unacknowledged before it, so Nagle cannot hold it (well
// under any loopback or Internet MSS).
const noDelayAfter = 512

func (c *rawConn) setNoDelay() {
	if sc, err := c.f.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1) })
	}
}

func (c *rawConn) Read(b []byte) (int, error) {
	n, err := c.f.Read(b)
	if err != nil && err != io.EOF {
		err = c.opErr("read", err)
	}
	return n, err
}

func (c *rawConn) Write(b []byte) (int, error) {
	if !c.noDelay.Load() && (c.wrote.Swap(true) || len(b) > noDelayAfter) {
		// Nagle's algorithm holds back a small segment while one is
		// unacknowledged: the second write (a TLS Finished, HTTP/2's
		// frames, a request body) or the tail of a long one would wait
		// for the peer's delayed ACK. net sets TCP_NODELAY on every
		// connection; a probe's one short request needs it not, so it
		// is set before the first write that could be held back.
		c.noDelay.Store(true)
		c.setNoDelay()
	}
	n, err := c.f.Write(b)
	if err != nil {
		err = c.opErr("write", err)
	}
	return n, err
}

func (c *rawConn) Close() error {
	if err := c.f.Close(); err != nil {
		return c.opErr("close", err)
	}
	return nil
}

// CloseWrite shuts down the writing side, as *net.TCPConn's does.
func (c *rawConn) CloseWrite() error {
	sc, err := c.f.SyscallConn()
	if err != nil {
		return c.opErr("close", err)
	}
	var serr error
	if err := sc.Control(func(fd uintptr) { serr = syscall.Shutdown(int(fd), syscall.SHUT_WR) }); err != nil {
		return c.opErr("close", err)
	}
	if serr != nil {
		return &net.OpError{Op: "close", Net: c.net, Source: c.localAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("shutdown", serr)}
	}
	return nil
}

func (c *rawConn) LocalAddr() net.Addr  { return c.localAddr() }
func (c *rawConn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(c.raddr) }

func (c *rawConn) SetDeadline(t time.Time) error {
	return c.deadlineErr(c.f.SetDeadline(t))
}
func (c *rawConn) SetReadDeadline(t time.Time) error {
	return c.deadlineErr(c.f.SetReadDeadline(t))
}
func (c *rawConn) SetWriteDeadline(t time.Time) error {
	return c.deadlineErr(c.f.SetWriteDeadline(t))
}

func (c *rawConn) deadlineErr(err error) error {
	if err != nil {
		return c.opErr("set", err)
	}
	return nil
}

// localAddr is the socket's own address, asked of the kernel only when
// something wants it (an error's text, -v): a probe rarely does.
func (c *rawConn) localAddr() net.Addr {
	c.laddrOnce.Do(func() {
		sc, err := c.f.SyscallConn()
		if err != nil {
			return
		}
		sc.Control(func(fd uintptr) {
			sa, err := syscall.Getsockname(int(fd))
			if err != nil {
				return
			}
			switch sa := sa.(type) {
			case *syscall.SockaddrInet4:
				c.laddr = &net.TCPAddr{IP: append(net.IP(nil), sa.Addr[:]...), Port: sa.Port}
			case *syscall.SockaddrInet6:
				c.laddr = &net.TCPAddr{IP: append(net.IP(nil), sa.Addr[:]...), Port: sa.Port}
			}
		})
	})
	return c.laddr
}

// opErr is err as net reports it for op on this connection.
func (c *rawConn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: c.net, Source: c.localAddr(), Addr: c.RemoteAddr(), Err: c.netErr(err)}
}

// netErr is the cause of an *os.File's error as net's would be: the
// closed-connection error is net's, an errno is named by its system call.
// The os package returns its errors unwrapped, so plain type assertions
// do (errors.As would put its targets on the heap on every call).
func (c *rawConn) netErr(err error) error {
	op := "read"
	if pe, ok := err.(*os.PathError); ok {
		op, err = pe.Op, pe.Err
	}
	switch e := err.(type) {
	case syscall.Errno:
		return os.NewSyscallError(op, e)
	case *os.SyscallError:
		return e
	}
	if err == os.ErrClosed {
		return net.ErrClosed
	}
	return err
}
