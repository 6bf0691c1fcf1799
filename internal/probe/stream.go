package probe

import (
	"bufio"
	"context"
	"net"
	"net/url"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

// conversation is what the exchanges of request/answer services over one
// connection share (redis.go, postgres.go): the connect through the run's
// dialler in the connect window, TLS through the shared capture, the
// request written and the answer read in the read window, the phases
// recorded as the HTTP/1.1 exchange records them (connect, tls, ttfb
// from the request written to the answer's first byte, total). No proxy is
// used, as for tcp://: a tunnel would prove only that the proxy connected.
type conversation struct {
	p    *session.Probe
	conn net.Conn
	br   *bufio.Reader
	// first: the answer's first byte came.
	first bool
	// connectTimeout, when set, is the connect window in place of
	// --connect-timeout (a URL's own: postgres' connect_timeout).
	connectTimeout time.Duration
}

// connect dials the URL's host, at defaultPort when it names none.
func (cv *conversation) connect(ctx context.Context, defaultPort string) error {
	return cv.connectTo(ctx, cv.p.Opts.URL, defaultPort)
}

// connectTo dials hop's host (the URL's, or one of a libpq URL's hosts),
// at defaultPort when it names none, in a connect window of its own.
func (cv *conversation) connectTo(ctx context.Context, hop *url.URL, defaultPort string) error {
	p, o := cv.p, cv.p.Opts
	p.Mu.Lock()
	p.HopURL = hop
	p.ServerName = hop.Hostname()
	if tc := o.TLSConfig; tc != nil && tc.ServerName != "" {
		p.ServerName = tc.ServerName
	}
	now := time.Now()
	sock := scheme.SocketPath(hop)
	if sock != "" {
		// A Unix socket: no lookup, the connect is the first stage.
		p.EnterAt(classify.StageConnect, now)
	} else {
		p.EnterAt(p.FirstStage(hop, false), now)
	}
	window := o.ConnectTimeout
	if cv.connectTimeout > 0 {
		window = cv.connectTimeout
	}
	p.ConnDeadline = now.Add(window)
	p.ArmAt(&p.ConnWin, now, p.ConnDeadline)
	p.Mu.Unlock()
	port := hop.Port()
	if port == "" {
		port = defaultPort
	}
	var c net.Conn
	var err error
	if sock != "" {
		c, err = p.DialUnix(ctx, sock)
	} else {
		c, err = p.DialHost(ctx, hop.Hostname(), port)
	}
	if err != nil {
		return err
	}
	// A backstop only: the windows close the connection through the
	// context a moment before it.
	c.SetDeadline(p.Start.Add(o.MaxTime + 2*session.MaxTimeBackstop))
	cv.conn = c
	return nil
}

// startTLS makes the connection TLS (the tls phase, every TLS reason).
func (cv *conversation) startTLS(ctx context.Context) error {
	conn := tlsClient(cv.p, cv.conn)
	cv.conn = conn
	return handshake(cv.p, ctx, conn, nil)
}

// connected closes the connect window: what follows is the request and
// its answer.
func (cv *conversation) connected() {
	p := cv.p
	p.Mu.Lock()
	p.Disarm(&p.ConnWin)
	p.ConnReady = time.Now()
	p.EnterAt(classify.StageHeaders, p.ConnReady)
	p.Mu.Unlock()
}

// send writes the request; the read window opens when it is out.
func (cv *conversation) send(b []byte) error {
	if _, err := cv.conn.Write(b); err != nil {
		return err
	}
	cv.armRead()
	return nil
}

// armRead opens the read window: the request is out.
func (cv *conversation) armRead() {
	p, o := cv.p, cv.p.Opts
	now := time.Now()
	p.Mu.Lock()
	p.WroteHeaders, p.Wrote = now, now
	p.ArmAt(&p.ReadWin, now, now.Add(o.ReadTimeout))
	p.Mu.Unlock()
	if d := now.Add(o.ReadTimeout + 2*session.MaxTimeBackstop); d.Before(p.Start.Add(o.MaxTime + 2*session.MaxTimeBackstop)) {
		cv.conn.SetReadDeadline(d)
	}
	if cv.br == nil {
		cv.br = bufio.NewReaderSize(cv.conn, 4096)
	}
}

// firstByte waits for the answer's first byte and records ttfb.
func (cv *conversation) firstByte() error {
	if _, err := cv.br.Peek(1); err != nil {
		return err
	}
	cv.gotFirstByte()
	return nil
}

// gotFirstByte records the answer's first byte: ttfb.
func (cv *conversation) gotFirstByte() {
	p := cv.p
	p.Mu.Lock()
	cv.first = true
	p.FirstByte = time.Now()
	p.Record(PhaseTTFB, p.FirstByte.Sub(p.Wrote))
	p.Enter(classify.StageBody)
	p.Mu.Unlock()
}

// done ends the exchange once the answer is read: no window counts from
// here on.
func (cv *conversation) done() { cv.p.BodyRead(nil) }

func (cv *conversation) close() {
	if cv.conn != nil {
		cv.conn.Close()
	}
}
