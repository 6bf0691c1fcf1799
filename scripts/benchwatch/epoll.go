//go:build linux

package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// epollRun is the epoll floor: n GETs of /env/I/health, each on a fresh
// connection (Connection: close), 64 at a time, as ab makes them: one
// thread, non-blocking sockets in one epoll set (edge-triggered), no
// goroutine, timer or poller registration per connection; the answer read
// to EOF and checked for a 200 status line. It is what an I/O loop of
// healthctl's own would cost, against Go's net package (the bare floor)
// and ab. Each connection is bounded by 5 s, the whole run by 60 s.
func epollRun(spec string) {
	n, ap := floorSpec("-epoll-client", spec)
	if err := epollGets(n, ap); err != nil {
		fail(fmt.Errorf("the epoll floor: %v", err))
	}
}

// floorSpec parses a floor client's N,host:port, loopback only.
func floorSpec(mode, spec string) (int, netip.AddrPort) {
	count, hostport, _ := strings.Cut(spec, ",")
	n, _ := strconv.Atoi(count)
	ap, err := netip.ParseAddrPort(hostport)
	if n < 1 || err != nil || !ap.Addr().IsLoopback() {
		fail(fmt.Errorf("%s %q: want N,host:port on loopback", mode, spec))
	}
	return n, ap
}

// epollET is EPOLLET as the uint32 of an event's mask (syscall's constant
// is a negative int).
const epollET = 1 << 31

type epollConn struct {
	fd, index int
	connected bool
	n         int
	start     time.Time
	buf       [4096]byte
}

func epollGets(n int, ap netip.AddrPort) error {
	const inFlight, perConn, whole = 64, 5 * time.Second, 60 * time.Second
	var sa syscall.Sockaddr
	family := syscall.AF_INET
	if ap.Addr().Is4() {
		sa = &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	} else {
		family = syscall.AF_INET6
		sa = &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	hostport := net.JoinHostPort(ap.Addr().String(), strconv.Itoa(int(ap.Port())))
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer syscall.Close(ep)
	conns := map[int]*epollConn{}
	defer func() {
		for fd := range conns {
			syscall.Close(fd)
		}
	}()
	started, done := 0, 0
	open := func() error {
		fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := syscall.Connect(fd, sa); err != nil && err != syscall.EINPROGRESS {
			syscall.Close(fd)
			return err
		}
		ev := syscall.EpollEvent{Events: syscall.EPOLLOUT | syscall.EPOLLIN | syscall.EPOLLRDHUP | epollET, Fd: int32(fd)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			syscall.Close(fd)
			return err
		}
		conns[fd] = &epollConn{fd: fd, index: started, start: time.Now()}
		started++
		return nil
	}
	finish := func(c *epollConn) error {
		syscall.Close(c.fd)
		delete(conns, c.fd)
		done++
		if want := "HTTP/1.1 200 "; c.n < len(want) || string(c.buf[:len(want)]) != want {
			return errors.New("an answer was not a 200")
		}
		if started < n {
			return open()
		}
		return nil
	}
	for started < min(n, inFlight) {
		if err := open(); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(whole)
	var checked time.Time
	events := make([]syscall.EpollEvent, 128)
	for done < n {
		// The deadlines are checked every 100 ms (the wait's own bound),
		// not on every wake-up: the loop's cost is the exchanges'.
		if now := time.Now(); now.Sub(checked) >= 100*time.Millisecond {
			checked = now
			if now.After(deadline) {
				return fmt.Errorf("%d of %d answers within %s", done, n, whole)
			}
			for _, c := range conns {
				if now.Sub(c.start) > perConn {
					return fmt.Errorf("no whole answer within %s", perConn)
				}
			}
		}
		k, err := syscall.EpollWait(ep, events, 100)
		if err != nil && err != syscall.EINTR {
			return err
		}
		for _, ev := range events[:max(k, 0)] {
			c := conns[int(ev.Fd)]
			if c == nil {
				continue
			}
			if !c.connected {
				if ev.Events&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) == 0 {
					continue
				}
				e, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
				if err == nil && e != 0 {
					err = syscall.Errno(e)
				}
				if err != nil {
					return fmt.Errorf("connect: %v", err)
				}
				c.connected = true
				req := "GET /env/" + strconv.Itoa(c.index) + "/health HTTP/1.1\r\nHost: " + hostport + "\r\nConnection: close\r\n\r\n"
				if _, err := syscall.Write(c.fd, []byte(req)); err != nil {
					return fmt.Errorf("write: %v", err)
				}
			}
			for {
				if c.n == len(c.buf) {
					return errors.New("answer longer than the buffer")
				}
				m, err := syscall.Read(c.fd, c.buf[c.n:])
				if err == syscall.EAGAIN {
					break
				}
				if err != nil {
					return fmt.Errorf("read: %v", err)
				}
				if m == 0 {
					if err := finish(c); err != nil {
						return err
					}
					break
				}
				c.n += m
			}
		}
	}
	return nil
}
