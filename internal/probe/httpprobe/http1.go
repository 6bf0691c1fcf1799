package httpprobe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

// http1Exchange is the common case of an HTTP probe spoken without net/http's
// Transport: an http:// URL, no proxy for it, no redirect followed, no
// HTTP/2. One fresh connection from the shared dialler, the request written
// on it, the answer read back, all on the caller's goroutine. The Transport
// costs a probe several goroutines (its read and write loops), contexts,
// trace hooks and per-transport set-up: most of a sweep's CPU per target and
// of a probe's own start-up. What the answer says is read and judged as
// httpExchange does (readAnswer, describe), and the errors are those the
// Transport returns for the same server, so every reason and sentence is the
// same whichever exchange spoke.
//
// The windows hold as on the Transport's path: whatever ends the probe's
// context closes the connection (the dialler keeps it, closeConns), so no
// read or write outlives a window, and the connection's deadline is a
// backstop a moment after the window that is open.
type http1Exchange struct {
	httpExchange
	conn net.Conn
	// br reads the answer; back to readers when the exchange is done.
	br *bufio.Reader
	// backstop is the window whose backstop is the connection's deadline.
	backstop *session.Window
	// ctx is the probe's context, for RoundTrip (the redirect logic's
	// round tripper is the exchange itself); lim bounds the headers' read.
	// Both are parts of the exchange, not allocations of their own.
	ctx context.Context
	lim headerLimit
}

// maxHeaderBytes bounds the answer's headers (and any 1xx before them), as
// the Transport's MaxResponseHeaderBytes does.
const maxHeaderBytes = 1 << 20

// HTTP1Fits reports whether a probe of p's options can take the plain
// exchange: plain HTTP/1.1 to the URL itself, and a request that the
// Transport would send as it is, with nothing of its own to add but
// Accept-Encoding and Connection: close.
func HTTP1Fits(p *session.Probe) bool {
	o := p.Opts
	if o.URL == nil || o.URL.Scheme != "http" || o.Follow != 0 || o.HTTP2PriorKnowledge {
		return false
	}
	if o.Proxy != nil {
		pu, err := o.Proxy(o.URL)
		if err != nil || pu != nil {
			return false
		}
	}
	if !ascii(o.URL.Hostname()) {
		// The Transport dials an IDNA name's ASCII form.
		return false
	}
	for k, vs := range o.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Connection", "Upgrade", "Transfer-Encoding", "Te", "Trailer":
			// The Transport's own rules about these (close, protocol
			// switch, framing) are not worth copying for a probe.
			return false
		}
		if !validHeader(k, vs) {
			// The Transport refuses it with its own error.
			return false
		}
	}
	return true
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// validHeader is net/http's rule for a header it sends: the name a token,
// no control character but tab in a value.
func validHeader(k string, vs []string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	for _, v := range vs {
		for i := 0; i < len(v); i++ {
			if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
				return false
			}
		}
	}
	return true
}

// newHTTP1 builds the request of one probe, untraced: the exchange records
// its own phases.
func newHTTP1(ctx context.Context, p *session.Probe) (session.Exchange, error) {
	req, err := NewRequest(ctx, p.Opts)
	if err != nil {
		return nil, err
	}
	countBody(p, req)
	h := &http1Exchange{httpExchange: httpExchange{p: p, req: req}}
	h.letGo = h
	return h, nil
}

// Close closes the connection once: run closes it as soon as the answer
// is read, and the probe's deferred close comes after.
func (h *http1Exchange) Close() {
	if h.conn != nil {
		h.conn.Close()
		h.conn = nil
	}
}

func (h *http1Exchange) Run(ctx context.Context) error {
	// Through the redirect logic with --follow 0: a Location is
	// reported, never followed.
	h.ctx = ctx
	h.rt = roundTrips(h.p, ctx, h, h.req)
	err := h.readAnswer()
	if errors.Is(err, os.ErrDeadlineExceeded) && h.backstop != nil {
		// The connection's deadline came before the window's timer (a
		// starved timer goroutine): the window closed all the same.
		p := h.p
		p.Mu.Lock()
		if !p.Stopped {
			p.NoteWindow()
			p.End(h.backstop.Err())
		}
		p.Mu.Unlock()
	}
	h.Close()
	if h.br != nil {
		// Nothing reads the answer from here on: its headers and body
		// are copies (ReadResponse's strings, readAnswer's buffer).
		h.br.Reset(nil)
		readers.Put(h.br)
		h.br = nil
	}
	return err
}

// answerBuffer is the size of the HTTP/1.1 exchange's answer readers
// (bufio's default).
const answerBuffer = 4 << 10

// readers are the HTTP/1.1 exchange's answer readers, reused: a sweep makes
// one probe a target.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, answerBuffer) }}

// RoundTrip is the HTTP/1.1 exchange as the redirect logic's round tripper.
func (h *http1Exchange) RoundTrip(*http.Request) (*http.Response, error) { return h.roundTrip(h.ctx) }

// roundTrip dials, writes the request and reads the answer's headers,
// recording the phases the Transport's trace hooks record on its path.
func (h *http1Exchange) roundTrip(ctx context.Context) (*http.Response, error) {
	conn, err := h.connect(ctx)
	if err != nil {
		return nil, err
	}
	gzipAsked, err := h.write(conn)
	if err != nil {
		return nil, err
	}
	readBackstop := h.requestWritten(conn)
	resp, err := h.readHead(conn, readBackstop)
	if err != nil {
		return nil, err
	}
	if gzipAsked && strings.EqualFold(session.HeaderValue(resp.Header, "Content-Encoding"), "gzip") && resp.Body != http.NoBody {
		// The Accept-Encoding was ours: decode, as the Transport does.
		resp.Body = &gzipBody{lazyGzip{src: resp.Body}, resp.Body}
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
	}
	return resp, nil
}

// connect opens the connect window and dials the request's host; once
// connected, the headers stage begins, and the connection's write deadline
// is the --max-time backstop.
func (h *http1Exchange) connect(ctx context.Context) (net.Conn, error) {
	p, o, req := h.p, h.p.Opts, h.req
	beginHop(p, req.URL)
	p.Mu.Lock()
	now := time.Now()
	p.EnterAt(p.FirstStage(p.HopURL, false), now)
	p.ConnDeadline = now.Add(o.ConnectTimeout)
	p.ArmAt(&p.ConnWin, now, p.ConnDeadline)
	p.Mu.Unlock()
	port := req.URL.Port()
	if port == "" {
		port = scheme.DefaultPort(req.URL.Scheme)
	}
	conn, err := p.DialHost(ctx, req.URL.Hostname(), port)
	if err != nil {
		return nil, err
	}
	h.conn = conn
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	// Backstops only: the windows close the connection through the
	// context a moment before these deadlines. The write's is set now,
	// the read's once the request is out.
	conn.SetWriteDeadline(p.Start.Add(o.MaxTime + 2*session.MaxTimeBackstop))
	h.backstop = &p.MaxWin
	p.Mu.Lock()
	p.Disarm(&p.ConnWin)
	p.ConnReady = time.Now()
	p.EnterAt(classify.StageHeaders, p.ConnReady)
	p.Mu.Unlock()
	return conn, nil
}

// requestWritten opens the read window once the request is out, and sets
// the connection's read deadline, its backstop, which it returns.
func (h *http1Exchange) requestWritten(conn net.Conn) time.Time {
	p, o := h.p, h.p.Opts
	now := time.Now()
	p.Mu.Lock()
	p.WroteHeaders, p.Wrote = now, now
	p.ArmAt(&p.ReadWin, now, now.Add(o.ReadTimeout))
	p.Mu.Unlock()
	backstop := p.Start.Add(o.MaxTime + 2*session.MaxTimeBackstop)
	if d := now.Add(o.ReadTimeout + 2*session.MaxTimeBackstop); d.Before(backstop) {
		backstop = d
		h.backstop = &p.ReadWin
	}
	conn.SetReadDeadline(backstop)
	return backstop
}

// readHead reads the answer's status line and headers (past any 1xx but
// 101) with http.ReadResponse, within the header budget; ttfb is the first
// byte. A deadline that fires inside them is the window's.
func (h *http1Exchange) readHead(conn net.Conn, backstop time.Time) (*http.Response, error) {
	p := h.p
	lr := &h.lim
	*lr = headerLimit{r: conn, n: maxHeaderBytes}
	br := readers.Get().(*bufio.Reader)
	br.Reset(lr)
	h.br = br
	if _, err := br.Peek(1); err != nil {
		// Nothing came back: the Transport reports the read's own
		// error (EOF, a reset).
		return nil, err
	}
	p.Mu.Lock()
	p.FirstByte = time.Now()
	p.Record(result.PhaseTTFB, p.FirstByte.Sub(p.Wrote))
	p.Mu.Unlock()
	for {
		resp, err := http.ReadResponse(br, h.req)
		if err != nil {
			if !time.Now().Before(backstop) {
				// The deadline fired inside the status line or the
				// headers: net/http's reader reports what it had as a
				// malformed answer, but it is the window that closed.
				return nil, fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", os.ErrDeadlineExceeded)
			}
			if lr.n <= 0 {
				err = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", maxHeaderBytes)
			}
			// The Transport has closed the connection by the time it
			// returns what its read loop saw, and says so.
			return nil, fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", err)
		}
		if c := resp.StatusCode; c >= 100 && c <= 199 && c != http.StatusSwitchingProtocols {
			// An informational answer: the real one follows, within
			// the same header budget.
			continue
		}
		lr.n = math.MaxInt64 // the body is bounded by --max-body, not here
		return resp, nil
	}
}

// write sends the request as the Transport sends it on a connection without
// keep-alives: net/http's own encoding of the request, with Accept-Encoding:
// gzip (when the caller set none, and not for HEAD or a range) and
// Connection: close added after the caller's headers. It reports whether
// gzip was asked for.
func (h *http1Exchange) write(conn net.Conn) (bool, error) {
	o, req := h.p.Opts, h.req
	gzipAsked := !removesHeader(o, "Accept-Encoding") && session.HeaderValue(req.Header, "Accept-Encoding") == "" &&
		session.HeaderValue(req.Header, "Range") == "" && req.Method != http.MethodHead
	extra := "Connection: close\r\n"
	if gzipAsked {
		extra = "Accept-Encoding: gzip\r\nConnection: close\r\n"
	}
	body := req.Body
	buf := heads.Get().(*bytes.Buffer)
	err := netHTTPRequest(buf, req, extra)
	if err == nil {
		_, err = conn.Write(buf.Bytes())
	}
	if buf.Cap() <= maxPooledHead {
		buf.Reset()
		heads.Put(buf)
	}
	if body == nil || body == http.NoBody {
		return gzipAsked, err
	}
	if err != nil {
		body.Close()
		return false, err
	}
	// The body goes out on a goroutine of its own while the answer is
	// read (a server may refuse it before reading it), 32 KiB at a time
	// from its source: a 50 MB -d @FILE costs no more memory than a small
	// one. It ends when the body is written or the connection, closed
	// when the exchange is done or a window closes, fails its write.
	go func() {
		_, _ = io.Copy(conn, body)
		body.Close()
	}()
	return gzipAsked, nil
}

// heads are the buffers requests' heads are encoded in, reused: a sweep
// writes one request a target. One that grew past maxPooledHead (a request
// with large headers of its own) is left to the collector.
var heads = sync.Pool{New: func() any { b := new(bytes.Buffer); b.Grow(256); return b }}

const maxPooledHead = 16 << 10

// netHTTPRequest encodes req's head — request line and headers — into buf
// (empty) as net/http's Request.Write encodes it, with extra after the
// caller's headers; the body is not read (write sends it).
func netHTTPRequest(buf *bytes.Buffer, req *http.Request, extra string) error {
	head := *req
	var stop *headOnly
	if req.Body != nil && req.Body != http.NoBody {
		stop = &headOnly{}
		head.Body = stop
	}
	if err := head.Write(buf); err != nil && (stop == nil || !stop.reached) {
		return err
	}
	b := buf.Bytes()
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		return errors.New("net/http: request has no end of headers")
	}
	// extra goes in at the blank line that ends the headers: what
	// follows it moves up, in place.
	at, tail := end+2, len(b)-(end+2)
	buf.WriteString(extra)
	b = buf.Bytes()
	copy(b[at+len(extra):], b[at:at+tail])
	copy(b[at:], extra)
	return nil
}

// headerLimit bounds what the headers may read from the connection, as the
// Transport's read limit does.
type headerLimit struct {
	r net.Conn
	n int64
}

func (l *headerLimit) Read(b []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("read limit of %d bytes exhausted", maxHeaderBytes)
	}
	if int64(len(b)) > l.n {
		b = b[:l.n]
	}
	n, err := l.r.Read(b)
	l.n -= int64(n)
	return n, err
}

// gzipBody is a body decoded from gzip that closes the raw body.
type gzipBody struct {
	lazyGzip
	raw interface{ Close() error }
}

func (g *gzipBody) Close() error { return g.raw.Close() }

// headOnly is the body netHTTPRequest hands Request.Write: its first read
// says the head is written and stops the write there.
type headOnly struct{ reached bool }

var errHeadOnly = errors.New("request head only")

func (h *headOnly) Read([]byte) (int, error) { h.reached = true; return 0, errHeadOnly }
func (h *headOnly) Close() error             { return nil }
