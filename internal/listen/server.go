package listen

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// The server's windows. A client must send its request headers within
// HeaderTimeout; an idle keep-alive connection is closed after
// IdleTimeout (a scraper's pool reconnects, on loopback in microseconds).
// Every answer but /probe's is written within WriteTimeout; /probe's
// deadline is its own budget (Budget) plus WriteSlack, set per request,
// so no probe is cut by a write limit shorter than its timeout. A
// request's read deadline is its write deadline: a client trickling a
// body it was never asked for cannot hold the connection past it.
const (
	HeaderTimeout = 5 * time.Second
	IdleTimeout   = 5 * time.Second
	WriteTimeout  = 10 * time.Second
	WriteSlack    = 5 * time.Second
	maxHeader     = 8 << 10
)

// MaxConns is how many connections the server holds at once for a soft
// open-files limit of nofile: a quarter of what is left beside the
// process's reserve of 64, between 8 and 4096 (4096 from a limit of
// 16,448 up; Go raises the soft limit to the hard one at start, commonly
// 524,288). The connections are a budget beside the probes' (a sweep's
// --concurrency and /probe's as many): a few thousand slow or idle
// clients can never take the descriptors the probes need. Requests are
// not bounded by it: /probe's probes are (Config.ProbeConcurrency), and a
// connection idle between a scraper's requests gives its slot to a new
// one when the server is full (connLimit).
func MaxConns(nofile uint64) int {
	const reserve, least, most = 64, 8, 4096
	if nofile <= reserve {
		return least
	}
	return int(min(most, max(least, (nofile-reserve)/4)))
}

// Server is the --listen server for h, on ln, holding at most maxConns
// connections: serve it with srv.Serve(l).
func Server(h http.Handler, ln net.Listener, maxConns int) (srv *http.Server, l net.Listener) {
	cl := &connLimit{Listener: ln, max: max(maxConns, 1), idle: map[net.Conn]struct{}{},
		freed: make(chan struct{}, 1), done: make(chan struct{})}
	srv = &http.Server{Handler: h, ReadHeaderTimeout: HeaderTimeout, WriteTimeout: WriteTimeout,
		IdleTimeout: IdleTimeout, MaxHeaderBytes: maxHeader, ConnState: cl.state}
	return srv, cl
}

// connLimit accepts at most max connections at once. When it is full, it
// closes a connection that is idle between requests (a keep-alive one
// waiting for the scraper's next) to take the next from the kernel's
// queue: an idle connection never parks a new request. Only connections
// with a request under way (or still sending one, bounded by
// HeaderTimeout) make Accept wait.
type connLimit struct {
	net.Listener
	max int

	mu   sync.Mutex
	open int
	// idle are the connections served and waiting for their next request.
	idle      map[net.Conn]struct{}
	freed     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *connLimit) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			l.mu.Unlock()
			break
		}
		var victim net.Conn
		for c := range l.idle {
			victim = c
			delete(l.idle, c)
			break
		}
		l.mu.Unlock()
		if victim != nil {
			// An idle connection closed by the server: a client's
			// next request on it is retried on a new one (Go's and
			// Prometheus's transports retry a GET on a reused
			// connection the server closed).
			victim.Close()
			continue
		}
		select {
		case <-l.freed:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		l.release(nil)
		return nil, err
	}
	return &limitedConn{Conn: c, l: l}, nil
}

// state follows the server's connections: which are idle. A connection
// turning idle wakes a full Accept, which may now close it.
func (l *connLimit) state(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	if s == http.StateIdle {
		l.idle[c] = struct{}{}
	} else {
		delete(l.idle, c)
	}
	l.mu.Unlock()
	if s == http.StateIdle {
		l.poke()
	}
}

func (l *connLimit) release(c net.Conn) {
	l.mu.Lock()
	l.open--
	if c != nil {
		delete(l.idle, c)
	}
	l.mu.Unlock()
	l.poke()
}

// poke wakes a waiting Accept (one wake-up is kept for the next).
func (l *connLimit) poke() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

func (l *connLimit) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitedConn struct {
	net.Conn
	l    *connLimit
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}
