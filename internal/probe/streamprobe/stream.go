package streamprobe

import (
	"bufio"
	"context"
	"net"
	"net/url"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

// Conversation is what the exchanges of request/answer services over one
// connection share (redis.go, postgres.go): the connect through the run's
// dialler in the connect window, TLS through the shared capture, the
// request written and the answer read in the read window, the phases
// recorded as the HTTP/1.1 exchange records them (connect, tls, ttfb
// from the request written to the answer's first byte, total). No proxy is
// used, as for tcp://: a tunnel would prove only that the proxy connected.
type Conversation struct {
	P    *session.Probe
	Conn net.Conn
	BR   *bufio.Reader
	// First: the answer's first byte came.
	First bool
	// ConnectTimeout, when set, is the connect window in place of
	// --connect-timeout (a URL's own: postgres' connect_timeout).
	ConnectTimeout time.Duration
}

// Connect dials the URL's host, at defaultPort when it names none.
func (cv *Conversation) Connect(ctx context.Context, defaultPort string) error {
	return cv.ConnectTo(ctx, cv.P.Opts.URL, defaultPort)
}

// ConnectTo dials hop's host (the URL's, or one of a libpq URL's hosts),
// at defaultPort when it names none, in a connect window of its own.
func (cv *Conversation) ConnectTo(ctx context.Context, hop *url.URL, defaultPort string) error {
	p, o := cv.P, cv.P.Opts
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
	if cv.ConnectTimeout > 0 {
		window = cv.ConnectTimeout
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
	cv.Conn = c
	return nil
}

// Open is a client's way in: it dials the URL's host (at its row's default
// port when it names none), makes the connection TLS when the row speaks
// TLS (rediss://, amqps://), and closes the connect window.
func (cv *Conversation) Open(ctx context.Context) error {
	o := cv.P.Opts
	if err := cv.Connect(ctx, scheme.DefaultPort(o.URL.Scheme)); err != nil {
		return err
	}
	if o.Secure() {
		if err := cv.StartTLS(ctx); err != nil {
			return err
		}
	}
	cv.Connected()
	return nil
}

// StartTLS makes the connection TLS (the tls phase, every TLS reason).
func (cv *Conversation) StartTLS(ctx context.Context) error {
	conn := tlsClient(cv.P, cv.Conn)
	cv.Conn = conn
	return Handshake(cv.P, ctx, conn, nil)
}

// Connected closes the connect window: what follows is the request and
// its answer.
func (cv *Conversation) Connected() {
	p := cv.P
	p.Mu.Lock()
	p.Disarm(&p.ConnWin)
	p.ConnReady = time.Now()
	p.EnterAt(classify.StageHeaders, p.ConnReady)
	p.Mu.Unlock()
}

// Send writes the request; the read window opens when it is out.
func (cv *Conversation) Send(b []byte) error {
	if _, err := cv.Conn.Write(b); err != nil {
		return err
	}
	cv.ArmRead()
	return nil
}

// ArmRead opens the read window: the request is out.
func (cv *Conversation) ArmRead() {
	p, o := cv.P, cv.P.Opts
	now := time.Now()
	p.Mu.Lock()
	p.WroteHeaders, p.Wrote = now, now
	p.ArmAt(&p.ReadWin, now, now.Add(o.ReadTimeout))
	p.Mu.Unlock()
	if d := now.Add(o.ReadTimeout + 2*session.MaxTimeBackstop); d.Before(p.Start.Add(o.MaxTime + 2*session.MaxTimeBackstop)) {
		cv.Conn.SetReadDeadline(d)
	}
	if cv.BR == nil {
		cv.BR = bufio.NewReaderSize(cv.Conn, 4096)
	}
}

// FirstByte waits for the answer's first byte and records ttfb.
func (cv *Conversation) FirstByte() error {
	if _, err := cv.BR.Peek(1); err != nil {
		return err
	}
	cv.GotFirstByte()
	return nil
}

// GotFirstByte records the answer's first byte: ttfb.
func (cv *Conversation) GotFirstByte() {
	p := cv.P
	p.Mu.Lock()
	cv.First = true
	p.FirstByte = time.Now()
	p.Record(result.PhaseTTFB, p.FirstByte.Sub(p.Wrote))
	p.Enter(classify.StageBody)
	p.Mu.Unlock()
}

// Done ends the exchange once the answer is read: no window counts from
// here on.
func (cv *Conversation) Done() { cv.P.BodyRead(nil) }

func (cv *Conversation) Close() {
	if cv.Conn != nil {
		cv.Conn.Close()
	}
}
