package grpcprobe

// The gRPC health exchange: one grpc.health.v1.Health/Check call, carried by
// net/http's own HTTP/2 (cleartext for grpc://, TLS with ALPN h2 for
// grpcs://) instead of grpc-go, whose initialisation every command would
// pay at start (.ci/run's gRPC guard keeps it out). A unary call is one POST
// with a length-prefixed protobuf message and a status in the trailers,
// and the health messages have one field each, so the few bytes of
// protobuf are encoded here by hand (see grpchealth.EncodeRequest for why not
// protowire).

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/grpchealth"
	"github.com/healthctl/healthctl/internal/probe/httpprobe"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
)

// GRPCInfo is what a health call answered (grpchealth.Info).
type GRPCInfo = grpchealth.Info

// grpcExchange is the gRPC health protocol: one Check call on its own
// HTTP/2 connection, through the run's dialler, TLS capture and windows.
type grpcExchange struct {
	p       *session.Probe
	service string
	// first holds the first bytes a grpc:// server sent, to say what it
	// speaks when it is not HTTP/2.
	first firstBytes
	req   *http.Request
	tr    *http.Transport
	resp  *http.Response
	ans   grpchealth.Answer
	read  bool
	// goAway: the server sent GOAWAY before the call's answer (read
	// stays true: that is the call's answer, as grpc-go reports it).
	goAway bool
}

func New(ctx context.Context, p *session.Probe) (session.Exchange, error) {
	o := p.Opts
	service := o.GRPCService
	if service == "" {
		service = grpchealth.ServiceOf(o.URL)
	}
	// The server may give up when the probe does: the call's deadline
	// is the whole probe's.
	req, err := grpchealth.NewRequest(httpprobe.TraceContext(p, ctx), o.URL, o.Secure(), service, o.MaxTime, o.UserAgent)
	if err != nil {
		return nil, err
	}
	// -H adds request metadata, as grpc_health_probe's -rpc-header does;
	// "Host:" sets the :authority.
	for k, vs := range o.Header {
		if len(vs) == 1 && vs[0] == "" || k == "Content-Type" || k == "Te" {
			continue
		}
		req.Header[k] = append([]string(nil), vs...)
	}
	if o.Host != "" {
		req.Host = o.Host
	}
	g := &grpcExchange{p: p, service: service, req: req}
	g.tr = grpcTransport(p, &g.first)
	return g, nil
}

// firstBytes records the first bytes read from a connection.
type firstBytes struct {
	mu  sync.Mutex
	buf []byte
}

func (f *firstBytes) add(b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := 64 - len(f.buf); n > 0 {
		f.buf = append(f.buf, b[:min(n, len(b))]...)
	}
}

func (f *firstBytes) get() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.buf
}

// recordingConn is a connection that notes the first bytes it reads.
type recordingConn struct {
	net.Conn
	first *firstBytes
}

func (c *recordingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.first.add(b[:n])
	}
	return n, err
}

// Write notes, when the write fails because the server already closed
// (an HTTP/1 server answers the HTTP/2 preface with an error and closes),
// what the server had sent: a short read of what is already there.
func (c *recordingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil && len(c.first.get()) == 0 {
		c.Conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		buf := make([]byte, 64)
		if m, _ := c.Conn.Read(buf); m > 0 {
			c.first.add(buf[:m])
		}
	}
	return n, err
}

// seenText describes what a cleartext server sent first when it was not
// HTTP/2: its HTTP/1 status line, the bytes themselves (quoted), or that it
// sent nothing; "" when it began as an HTTP/2 server does (a SETTINGS
// frame on stream 0).
func seenText(b []byte) string {
	if len(b) >= 9 && b[3] == 4 && b[5]|b[6]|b[7]|b[8] == 0 {
		return ""
	}
	if len(b) == 0 {
		return "the server sent no HTTP/2 preface"
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimRight(line, "\r")
	if bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return fmt.Sprintf("the server answered in HTTP/1 (%q), not HTTP/2", line)
	}
	return fmt.Sprintf("the server sent %q, not HTTP/2", line)
}

// grpcTransport is the transport of one health call: HTTP/2 only, no
// connection kept. grpcs:// goes through a proxy as https does (a CONNECT
// tunnel); grpc:// connects directly, as a forward proxy cannot carry
// cleartext HTTP/2.
func grpcTransport(p *session.Probe, first *firstBytes) *http.Transport {
	o := p.Opts
	secure := o.Secure()
	dial := p.Dial
	if !secure {
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := p.Dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &recordingConn{Conn: c, first: first}, nil
		}
	}
	tr := &http.Transport{
		DialContext:            dial,
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: 1 << 20,
		Protocols:              grpchealth.Protocols(secure),
	}
	if secure {
		tc := p.TLSConfig()
		verify := tc.VerifyConnection
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			p.Mu.Lock()
			proxy := p.InProxyTLS
			p.Mu.Unlock()
			if err := verify(cs); err != nil || proxy {
				// An https:// proxy's own handshake speaks no gRPC.
				return err
			}
			if cs.NegotiatedProtocol != "h2" {
				// Else net/http goes on in HTTP/1.1 (or waits for an
				// HTTP/2 answer that never comes).
				return grpchealth.ErrNoHTTP2
			}
			return nil
		}
		tr.TLSClientConfig = tc
		tr.Proxy = func(r *http.Request) (*url.URL, error) { return p.UseProxy(r.URL, nil) }
	}
	return tr
}

func (g *grpcExchange) Answered() bool { return g.resp != nil }

func (g *grpcExchange) Close() { g.tr.CloseIdleConnections() }

func (g *grpcExchange) Run(ctx context.Context) error {
	p := g.p
	p.Mu.Lock()
	p.HopURL = p.Opts.URL
	p.ServerName = p.Opts.URL.Hostname()
	if tc := p.Opts.TLSConfig; tc != nil && tc.ServerName != "" {
		p.ServerName = tc.ServerName
	}
	p.Mu.Unlock()
	resp, err := g.tr.RoundTrip(g.req)
	if err != nil {
		if ctx.Err() == nil && strings.Contains(err.Error(), "received GOAWAY") {
			// An HTTP/2 server going away before it answered the call
			// (a gRPC server stopping): grpc-go reports the call as
			// UNAVAILABLE — an answer, and gRPC's, never "not gRPC".
			code := grpchealth.CodeUnavailable
			g.ans = grpchealth.Answer{Info: grpchealth.Info{Code: &code, CodeName: grpchealth.CodeName(code),
				Message: "the server sent GOAWAY before answering (" + err.Error() + ")"}}
			g.read, g.goAway = true, true
			return nil
		}
		return err
	}
	g.resp = resp
	p.HeadersArrived()
	p.SetStage(classify.StageBody)
	g.ans, err = grpchealth.Read(resp, g.service)
	g.read = true
	resp.Body.Close()
	p.BodyRead(err)
	return err
}

func (g *grpcExchange) Describe(err error, _ time.Time, res *result.Result, obs *classify.Observation, _ *classify.Facts) {
	red := g.p.Opts.Redactor.String
	a := &grpchealth.Reply{Info: g.ans.Info}
	a.Info.Service = g.service
	a.Info.Message = red(a.Info.Message)
	obs.Answer = a
	if g.resp == nil && !g.goAway {
		if err != nil && !g.p.Opts.Secure() && g.p.Stage == classify.StageHeaders {
			a.Seen = red(seenText(g.first.get()))
		}
		obs.Refuted = grpchealth.Refutes(err, a.Seen != "")
		return
	}
	if g.resp != nil {
		res.HTTPVersion = g.resp.Proto
		if g.resp.TLS != nil {
			g.p.TLSState = g.resp.TLS
		}
	}
	obs.Refuted = err != nil && grpchealth.Refutes(err, false)
	if err != nil || !g.read {
		return
	}
	a.Read, a.Serving, a.HasMessage, a.Seen = true, g.ans.Serving, g.ans.HasMessage, g.ans.Protocol
}
