package truthclient

// One request on a fresh connection, read with the client's own HTTP/1.1
// code: the outcomes, the record and Get.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Outcome is how one request ended, as a client sees it.
type Outcome string

// The outcomes. Served is an accepted status with its whole body; BadStatus
// and Cut got a status line; the others got none.
const (
	Served    Outcome = "served"
	BadStatus Outcome = "status"
	Cut       Outcome = "cut"
	Refused   Outcome = "refused"
	Reset     Outcome = "reset"
	EOF       Outcome = "eof"
	NoAnswer  Outcome = "no_answer"
	Failed    Outcome = "error"
)

// Answered says a status line came back.
func (o Outcome) Answered() bool { return o == Served || o == BadStatus || o == Cut }

// The kinds of request the client makes.
const (
	KindTraffic  = "traffic"
	KindReady    = "readiness"
	KindLive     = "liveness"
	KindInflight = "inflight"
	// KindKeepAlive is a request on the one kept-alive connection.
	KindKeepAlive = "keepalive"
)

// Record is one request: when it was made (the connection attempt began),
// when it ended and what it got.
type Record struct {
	Kind        string
	Made, Ended time.Time
	Status      int
	// Bytes of body read; Delimited says the body had no length and ended
	// with the connection.
	Bytes     int64
	Delimited bool
	Outcome   Outcome
	Err       string
}

// Get makes one GET on a fresh connection to rawURL (http only), bounded
// by window from the moment it was made, and says what it got. accept
// says which statuses count as served (nil: 200-399).
func Get(ctx context.Context, rawURL string, window time.Duration, accept func(int) bool) (r Record) {
	r.Made = time.Now()
	defer func() { r.Ended = time.Now() }()
	if accept == nil {
		accept = func(s int) bool { return s >= 200 && s < 400 }
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		r.Outcome, r.Err = Failed, fmt.Sprintf("truthclient speaks plain http only: %q", rawURL)
		return r
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	deadline := r.Made.Add(window)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	d := net.Dialer{}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		r.Outcome, r.Err = transport(err, false), err.Error()
		return r
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	_ = c.SetDeadline(deadline)
	path := u.RequestURI()
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: truthclient\r\nAccept: */*\r\nConnection: close\r\n\r\n", path, u.Host); err != nil {
		r.Outcome, r.Err = transport(err, false), err.Error()
		return r
	}
	br := bufio.NewReader(c)
	status, length, chunked, err := readHead(br)
	if err != nil {
		r.Outcome, r.Err = transport(err, false), err.Error()
		return r
	}
	r.Status = status
	n, delimited, err := readBody(br, length, chunked)
	r.Bytes, r.Delimited = n, delimited
	switch {
	case err != nil:
		r.Outcome, r.Err = Cut, fmt.Sprintf("body cut after %d bytes: %v", n, err)
	case !accept(status):
		r.Outcome = BadStatus
	default:
		r.Outcome = Served
	}
	return r
}

// transport names a failure before any status line.
func transport(err error, _ bool) Outcome {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return Reset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return EOF
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return NoAnswer
	}
	return Failed
}

// readHead reads the status line and headers. length is -1 without a
// Content-Length.
func readHead(br *bufio.Reader) (status int, length int64, chunked bool, err error) {
	line, err := br.ReadString('\n')
	if err != nil {
		if err == io.EOF && line != "" {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, false, err
	}
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/1.") {
		return 0, 0, false, fmt.Errorf("not an HTTP/1 status line: %q", strings.TrimSpace(line))
	}
	status, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, false, fmt.Errorf("bad status %q", f[1])
	}
	length = -1
	for {
		h, err := br.ReadString('\n')
		if err != nil {
			return 0, 0, false, io.ErrUnexpectedEOF
		}
		h = strings.TrimRight(h, "\r\n")
		if h == "" {
			break
		}
		k, v, _ := strings.Cut(h, ":")
		v = strings.TrimSpace(v)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "content-length":
			if length, err = strconv.ParseInt(v, 10, 64); err != nil {
				return 0, 0, false, fmt.Errorf("bad Content-Length %q", v)
			}
		case "transfer-encoding":
			chunked = strings.Contains(strings.ToLower(v), "chunked")
		}
	}
	// 1xx, 204 and 304 have no body.
	if status/100 == 1 || status == 204 || status == 304 {
		return status, 0, false, nil
	}
	return status, length, chunked, nil
}

// readBody reads a body to its end: the chunked terminator, Content-Length
// bytes, or (neither) the connection's close.
func readBody(br *bufio.Reader, length int64, chunked bool) (n int64, delimited bool, err error) {
	switch {
	case chunked:
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return n, false, errors.New("no chunked terminator: " + eofText(err))
			}
			size, err := strconv.ParseInt(strings.TrimSpace(strings.SplitN(line, ";", 2)[0]), 16, 64)
			if err != nil {
				return n, false, fmt.Errorf("bad chunk size %q", strings.TrimSpace(line))
			}
			if size == 0 {
				// Trailers, then the empty line.
				for {
					t, err := br.ReadString('\n')
					if err != nil {
						return n, false, errors.New("no chunked terminator: " + eofText(err))
					}
					if strings.TrimRight(t, "\r\n") == "" {
						return n, false, nil
					}
				}
			}
			m, err := io.CopyN(io.Discard, br, size+2)
			n += min(m, size)
			if err != nil {
				return n, false, errors.New("chunk cut: " + eofText(err))
			}
		}
	case length >= 0:
		m, err := io.CopyN(io.Discard, br, length)
		if err != nil {
			return m, false, fmt.Errorf("Content-Length %d, got %d bytes: %s", length, m, eofText(err))
		}
		return m, false, nil
	}
	m, err := io.Copy(io.Discard, br)
	return m, true, err
}

func eofText(err error) string {
	if err == io.EOF {
		return "EOF"
	}
	return err.Error()
}
