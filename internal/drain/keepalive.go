package drain

// The kept-alive connection: opened before the signal, read by hand, and
// watched through the shutdown for a clean close or a reset.

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/probe/httpprobe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// keepAlive is the watched kept-alive connection, read by hand: Go's
// Transport would silently retry a request whose connection died.
type keepAlive struct {
	conn       net.Conn
	br         *bufio.Reader
	cr         *countReader
	host, path string
	why        string
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type timedKA struct {
	evidence.KeepAliveEvent
	at time.Time
}

// openKeepAlive connects to u's host and reads one response, to check that
// the server keeps the connection open.
func openKeepAlive(opts *scheme.Options) *keepAlive {
	ka := &keepAlive{}
	pu := opts.URL
	row, _ := scheme.LookupScheme(pu.Scheme)
	if row.Options&scheme.AppliesRequest == 0 {
		// HTTP/1.1 keep-alive is what this watches; a gRPC or TCP
		// liveness endpoint has none to watch.
		ka.why = "the liveness URL is " + pu.Scheme + "://, not HTTP/1.1: no kept-alive connection to watch"
		return ka
	}
	ka.host, ka.path = pu.Host, pu.RequestURI()
	if opts.Host != "" {
		ka.host = opts.Host
	}
	ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
	defer cancel()
	c, err := httpprobe.Dialer(withTimeout(opts, pollTimeout))(ctx, "tcp", hostPort(pu.String()))
	if err == nil && row.TLS {
		tc := httpprobe.TLSConfig(opts)
		tc.NextProtos = []string{"http/1.1"}
		t := tls.Client(c, tc)
		if err = t.HandshakeContext(ctx); err != nil {
			c.Close()
		}
		c = t
	}
	if err != nil {
		ka.why = "could not open a kept-alive connection: " + shortErr(err)
		return ka
	}
	ka.conn = c
	ka.cr = &countReader{r: c}
	ka.br = bufio.NewReader(ka.cr)
	if closeHdr, _, err := ka.roundTrip(); err != nil || closeHdr {
		c.Close()
		ka.conn = nil
		if err != nil {
			ka.why = "the kept-alive connection failed before the signal: " + shortErr(err)
		} else {
			ka.why = "the server closes connections after each response (no keep-alive to watch)"
		}
	}
	return ka
}

// roundTrip writes one request and reads its response. partial is the
// number of response bytes read when it failed.
func (ka *keepAlive) roundTrip() (closeHdr bool, partial int64, err error) {
	_ = ka.conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintf(ka.conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: healthctl-drain-test\r\n\r\n", ka.path, ka.host); err != nil {
		return false, 0, err
	}
	start := ka.cr.n - int64(ka.br.Buffered())
	resp, err := http.ReadResponse(ka.br, nil)
	if err != nil {
		return false, ka.cr.n - int64(ka.br.Buffered()) - start, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return false, max(1, ka.cr.n-int64(ka.br.Buffered())-start), err
	}
	return resp.Close, 0, nil
}

// watch sends a request on the kept-alive connection every 100 ms until ctx
// ends or the connection does; before each it checks whether the server
// has closed the idle connection (a FIN is a clean close, a reset is not).
func (ka *keepAlive) watch(ctx context.Context) (events []timedKA, requests int) {
	ev := func(kind evidence.KeepAliveKind, detail string) {
		events = append(events, timedKA{evidence.KeepAliveEvent{Kind: kind, Detail: detail}, time.Now()})
	}
	for ctx.Err() == nil {
		_ = ka.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := ka.br.Peek(1); err != nil {
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout():
			case errors.Is(err, io.EOF):
				ev(evidence.KeepAliveClosedIdle, "the server closed the idle kept-alive connection")
				return
			case ctx.Err() != nil:
				return
			default:
				ev(evidence.KeepAliveReset, "idle connection: "+shortErr(err))
				return
			}
		}
		closeHdr, partial, err := ka.roundTrip()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && closeHdr:
			requests++
			ev(evidence.KeepAliveClosedByHeader, "a response said Connection: close")
			return
		case err == nil:
			requests++
		case partial > 0:
			ev(evidence.KeepAliveReset, fmt.Sprintf("the connection ended %d bytes into a response: %s", partial, shortErr(err)))
			return
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE):
			// The server had closed it (FIN) as the request went out: a
			// clean close racing the request, which clients retry.
			ev(evidence.KeepAliveClosedIdle, "the server closed the kept-alive connection between responses")
			return
		default:
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				ev(evidence.KeepAliveNoAnswer, "no answer within 2s on the kept-alive connection; stopped watching it")
				return
			}
			// A reset before any byte of the response is the close race
			// every keep-alive client meets: the server closed the idle
			// connection as the request arrived (unread data turns its
			// FIN into a reset). Clients retry it; it is not mid-response.
			ev(evidence.KeepAliveClosedIdle, "the server closed the kept-alive connection as a request arrived ("+shortErr(err)+" before any byte of the response)")
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return events, requests
}
