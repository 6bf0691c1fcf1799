package metrics

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// ListenConns is how many connections --listen serves at once. A scraper
// needs one or two; more wait in the kernel's accept queue, where they hold
// no file descriptor of healthctl's, so slow or idle clients (400 of them
// under `ulimit -n 128`) can never take the descriptors the probes need:
// the listener and its connections fit in the reserve that the default
// --concurrency leaves beside the probes' budget.
const ListenConns = 8

// The --listen server's windows: a client must send its request headers
// within ListenHeaderTimeout, the whole request within ListenReadTimeout,
// and take the answer within ListenWriteTimeout; an idle keep-alive
// connection is closed after ListenIdleTimeout. Each bounds how long one
// client can hold one of the ListenConns slots.
const (
	ListenHeaderTimeout = 5 * time.Second
	ListenReadTimeout   = 10 * time.Second
	ListenWriteTimeout  = 10 * time.Second
	ListenIdleTimeout   = 30 * time.Second
	listenMaxHeader     = 8 << 10
)

// Server is the --listen HTTP server for h, with the windows above.
func Server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: ListenHeaderTimeout, ReadTimeout: ListenReadTimeout,
		WriteTimeout: ListenWriteTimeout, IdleTimeout: ListenIdleTimeout, MaxHeaderBytes: listenMaxHeader}
}

// LimitListener accepts at most n connections at once: Accept waits for a
// served connection to close before it takes the next from the kernel.
func LimitListener(l net.Listener, n int) net.Listener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
