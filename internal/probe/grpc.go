package probe

// The gRPC health exchange: one grpc.health.v1.Health/Check call, carried by
// net/http's own HTTP/2 (cleartext for grpc://, TLS with ALPN h2 for
// grpcs://) instead of grpc-go, which would add ~1 ms to every start of
// every command and several MiB to the binary. A unary call is one POST
// with a length-prefixed protobuf message and a status in the trailers,
// and the health messages have one field each, so the few bytes of
// protobuf are encoded here by hand (see grpcEncodeRequest for why not
// protowire).

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
)

// GRPCHealthPath is the HTTP/2 path of the health service's Check method.
const GRPCHealthPath = "/grpc.health.v1.Health/Check"

// The serving statuses of grpc.health.v1.HealthCheckResponse.
const (
	GRPCUnknown        = 0
	GRPCServing        = 1
	GRPCNotServing     = 2
	GRPCServiceUnknown = 3
)

// The gRPC status codes the health check treats on their own.
const (
	GRPCCodeOK            = 0
	GRPCCodeNotFound      = 5
	GRPCCodeUnimplemented = 12
)

// grpcCodeNames are the canonical names of the gRPC status codes.
var grpcCodeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
	"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// GRPCCodeName is a status code's canonical name ("UNIMPLEMENTED"), or
// "CODE_n" for a code outside the standard set.
func GRPCCodeName(code int) string {
	if code >= 0 && code < len(grpcCodeNames) {
		return grpcCodeNames[code]
	}
	return "CODE_" + strconv.Itoa(code)
}

// grpcStatusNames are the names of the serving statuses.
var grpcStatusNames = [...]string{"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"}

// GRPCStatusName is a serving status's name ("NOT_SERVING"), or its number
// for a value this version does not know.
func GRPCStatusName(s int) string {
	if s >= 0 && s < len(grpcStatusNames) {
		return grpcStatusNames[s]
	}
	return strconv.Itoa(s)
}

// GRPCInfo is what a health call answered. Status is set only when the call
// returned OK with a response message.
type GRPCInfo struct {
	// Service is the service whose health was asked ("" is the server's
	// overall health).
	Service string `json:"service"`
	// Status is the serving status's name ("SERVING", "NOT_SERVING", …),
	// "" when no response message came.
	Status string `json:"status,omitempty"`
	// Code is the grpc-status code, nil when none arrived.
	Code *int `json:"code,omitempty"`
	// CodeName is Code's canonical name ("UNIMPLEMENTED").
	CodeName string `json:"code_name,omitempty"`
	// Message is the grpc-message the server sent (redacted, decoded).
	Message string `json:"message,omitempty"`
}

// grpcAnswer is a health call's response as read: what it said, or the
// first way in which it was not gRPC at all (Protocol, the thing seen).
type grpcAnswer struct {
	Info GRPCInfo
	// Serving is the decoded serving status (valid with a code of OK and
	// a message).
	Serving int
	// HasMessage is true when a response message was decoded.
	HasMessage bool
	// Protocol says why the answer is not a gRPC one, with what was seen
	// ("content-type \"text/html\"", "HTTP/1.1 answer"); "" when it is.
	Protocol string
}

// grpcEncodeRequest frames a HealthCheckRequest{service}: the 5-byte gRPC
// prefix (not compressed, big-endian length) and the protobuf message,
// whose only field is the string 1 (tag 0x0a, varint length, bytes); an
// empty service is the empty message, as protobuf omits default values.
//
// Written by hand rather than with protobuf's protowire: the message is one
// field, and linking protowire brings protobuf's internal packages, whose
// initialisation hashes the running executable at start (measured in
// docs/benchmarks.md).
func grpcEncodeRequest(service string) []byte {
	var msg []byte
	if service != "" {
		msg = append(msg, 0x0a)
		msg = appendVarint(msg, uint64(len(service)))
		msg = append(msg, service...)
	}
	out := make([]byte, 5, 5+len(msg))
	putUint32(out[1:], uint32(len(msg)))
	return append(out, msg...)
}

func putUint32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// errVarint is a varint that runs past the end of its message or past 64 bits.
var errVarint = errors.New("bad varint")

func consumeVarint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			if i == 9 && b[i] > 1 {
				return 0, 0, errVarint
			}
			return v, i + 1, nil
		}
	}
	return 0, 0, errVarint
}

// grpcDecodeResponse reads a HealthCheckResponse message: field 1 (varint)
// is the serving status; any other field is skipped as protobuf requires
// of unknown fields (a newer server may add some); the last occurrence of
// field 1 wins. A missing field 1 is UNKNOWN (protobuf's default).
func grpcDecodeResponse(msg []byte) (int, error) {
	status := uint64(GRPCUnknown)
	for len(msg) > 0 {
		tag, n, err := consumeVarint(msg)
		if err != nil {
			return 0, fmt.Errorf("field tag: %w", err)
		}
		msg = msg[n:]
		field, wire := tag>>3, tag&7
		if field == 0 {
			return 0, errors.New("field number 0")
		}
		switch wire {
		case 0: // varint
			v, n, err := consumeVarint(msg)
			if err != nil {
				return 0, fmt.Errorf("field %d: %w", field, err)
			}
			msg = msg[n:]
			if field == 1 {
				status = v
			}
		case 1: // 64-bit
			if len(msg) < 8 {
				return 0, fmt.Errorf("field %d: truncated", field)
			}
			msg = msg[8:]
		case 2: // length-delimited
			l, n, err := consumeVarint(msg)
			if err != nil || l > uint64(len(msg)-n) {
				return 0, fmt.Errorf("field %d: truncated", field)
			}
			msg = msg[n+int(l):]
		case 5: // 32-bit
			if len(msg) < 4 {
				return 0, fmt.Errorf("field %d: truncated", field)
			}
			msg = msg[4:]
		default:
			return 0, fmt.Errorf("field %d: wire type %d", field, wire)
		}
		if field == 1 && wire != 0 {
			return 0, fmt.Errorf("field 1 (status): wire type %d, want varint", wire)
		}
	}
	if status > 1<<31-1 {
		return 0, fmt.Errorf("status %d out of range", status)
	}
	return int(status), nil
}

// grpcMessages splits a response body into its length-prefixed messages.
// A body that ends inside a prefix or a message is an error: the stream was
// cut short or is not gRPC.
func grpcMessages(body []byte) (msgs [][]byte, compressed bool, err error) {
	for len(body) > 0 {
		if len(body) < 5 {
			return nil, false, fmt.Errorf("message prefix cut short (%d of 5 bytes)", len(body))
		}
		flag := body[0]
		if flag > 1 {
			return nil, false, fmt.Errorf("message flag %d (want 0 or 1)", flag)
		}
		n := uint64(body[1])<<24 | uint64(body[2])<<16 | uint64(body[3])<<8 | uint64(body[4])
		if n > uint64(len(body)-5) {
			return nil, false, fmt.Errorf("message cut short (%d of %d bytes)", len(body)-5, n)
		}
		compressed = compressed || flag == 1
		msgs = append(msgs, body[5:5+n])
		body = body[5+n:]
	}
	return msgs, compressed, nil
}

// GRPCTimeout formats d as a grpc-timeout header value: at most eight
// digits and a unit, rounded up so the server never sees less time than the
// probe gives it.
func GRPCTimeout(d time.Duration) string {
	if d <= 0 {
		return "1n"
	}
	units := []struct {
		d time.Duration
		u string
	}{{time.Nanosecond, "n"}, {time.Microsecond, "u"}, {time.Millisecond, "m"}, {time.Second, "S"}, {time.Minute, "M"}, {time.Hour, "H"}}
	for _, u := range units {
		v := (d + u.d - 1) / u.d
		if v < 1e8 {
			return strconv.FormatInt(int64(v), 10) + u.u
		}
	}
	return "99999999H"
}

// grpcUnescapeMessage decodes grpc-message's percent-encoding; a malformed
// escape is kept as it came.
func grpcUnescapeMessage(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// newGRPCRequest builds the Check call for u (grpc:// or grpcs://) asking
// about service, telling the server how long the call may take.
func newGRPCRequest(ctx context.Context, u *url.URL, service string, timeout time.Duration, userAgent string) (*http.Request, error) {
	scheme := "http"
	if u.Scheme == "grpcs" {
		scheme = "https"
	}
	target := &url.URL{Scheme: scheme, Host: u.Host, Path: GRPCHealthPath}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(grpcEncodeRequest(service)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	if timeout > 0 {
		req.Header.Set("Grpc-Timeout", GRPCTimeout(timeout))
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	return req, nil
}

// GRPCService is the service a grpc:// URL names in its path ("" for the
// server's overall health): the path without its leading slash.
func GRPCService(u *url.URL) string {
	return strings.TrimPrefix(u.Path, "/")
}

// grpcProtocols is the one protocol a health call may use: HTTP/2, over
// cleartext (prior knowledge, no upgrade) or over TLS (ALPN h2).
func grpcProtocols(secure bool) *http.Protocols {
	p := new(http.Protocols)
	if secure {
		p.SetHTTP2(true)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	return p
}

// maxGRPCBody bounds what a health answer may be: the response is a few
// bytes; anything this large is not a health response.
const maxGRPCBody = 64 << 10

// readGRPC reads a health call's response: the body (bounded), then the
// status from the trailers, or from the headers of a trailers-only answer.
// err is the read error (the stream reset or cut, a window closing); the
// answer says what was understood before it.
func readGRPC(resp *http.Response, service string) (grpcAnswer, error) {
	a := grpcAnswer{Info: GRPCInfo{Service: service}}
	if resp.ProtoMajor != 2 {
		a.Protocol = fmt.Sprintf("the server answered %s, not HTTP/2 (status %d)", resp.Proto, resp.StatusCode)
		return a, nil
	}
	ct := resp.Header.Get("Content-Type")
	grpcType := ct == "application/grpc" || strings.HasPrefix(ct, "application/grpc+") || strings.HasPrefix(ct, "application/grpc;")
	if !grpcType {
		if ct == "" {
			ct = "none"
		} else {
			ct = strconv.Quote(ct)
		}
		a.Protocol = fmt.Sprintf("HTTP/2 status %d with content-type %s, not application/grpc", resp.StatusCode, ct)
		return a, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxGRPCBody+1))
	if err != nil {
		return a, err
	}
	if len(body) > maxGRPCBody {
		a.Protocol = fmt.Sprintf("response larger than %d bytes", maxGRPCBody)
		return a, nil
	}
	// Trailers are complete once the body has been read to its end; a
	// trailers-only answer carries the status in its headers instead.
	st := resp.Trailer.Get("Grpc-Status")
	msg := resp.Trailer.Get("Grpc-Message")
	if st == "" {
		st, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	if st == "" {
		if resp.StatusCode != http.StatusOK {
			a.Protocol = fmt.Sprintf("HTTP/2 status %d without grpc-status", resp.StatusCode)
		} else {
			a.Protocol = "no grpc-status in the trailers"
		}
		return a, nil
	}
	code, cerr := strconv.Atoi(st)
	if cerr != nil || code < 0 {
		a.Protocol = fmt.Sprintf("grpc-status %q is not a number", st)
		return a, nil
	}
	a.Info.Code = &code
	a.Info.CodeName = GRPCCodeName(code)
	a.Info.Message = grpcUnescapeMessage(msg)
	if code != GRPCCodeOK {
		return a, nil
	}
	msgs, compressed, merr := grpcMessages(body)
	switch {
	case merr != nil:
		a.Protocol = merr.Error()
		return a, nil
	case compressed:
		a.Protocol = "compressed response message (none was asked for)"
		return a, nil
	case len(msgs) != 1:
		a.Protocol = fmt.Sprintf("%d response messages to a unary call, want 1", len(msgs))
		return a, nil
	}
	s, derr := grpcDecodeResponse(msgs[0])
	if derr != nil {
		a.Protocol = "response message: " + derr.Error()
		return a, nil
	}
	a.Serving, a.HasMessage = s, true
	a.Info.Status = GRPCStatusName(s)
	return a, nil
}

// grpcExchange is the gRPC health protocol: one Check call on its own
// HTTP/2 connection, through the run's dialler, TLS capture and windows.
type grpcExchange struct {
	p       *run
	service string
	// first holds the first bytes a grpc:// server sent, to say what it
	// speaks when it is not HTTP/2.
	first firstBytes
	req   *http.Request
	tr    *http.Transport
	resp  *http.Response
	ans   grpcAnswer
	read  bool
}

func newGRPC(ctx context.Context, p *run) (exchange, error) {
	o := p.opts
	service := o.GRPCService
	if service == "" {
		service = GRPCService(o.URL)
	}
	// The server may give up when the probe does: the call's deadline
	// is the whole probe's.
	req, err := newGRPCRequest(p.traceContext(ctx), o.URL, service, o.MaxTime, o.UserAgent)
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
	g.tr = p.grpcTransport(&g.first)
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
func (p *run) grpcTransport(first *firstBytes) *http.Transport {
	o := p.opts
	secure := o.URL.Scheme == "grpcs"
	dial := p.dial
	if !secure {
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := p.dial(ctx, network, addr)
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
		Protocols:              grpcProtocols(secure),
	}
	if secure {
		tc := p.tlsConfig()
		verify := tc.VerifyConnection
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			if err := verify(cs); err != nil {
				return err
			}
			if cs.NegotiatedProtocol != "h2" {
				// Else net/http goes on in HTTP/1.1 (or waits for an
				// HTTP/2 answer that never comes).
				return classify.ErrNoHTTP2
			}
			return nil
		}
		tr.TLSClientConfig = tc
		tr.Proxy = func(r *http.Request) (*url.URL, error) {
			var pu *url.URL
			var err error
			if o.Proxy != nil {
				pu, err = o.Proxy(r.URL)
			}
			o.Redactor.AddURL(pu)
			p.mu.Lock()
			p.proxied, p.proxyURL = pu != nil, pu
			p.mu.Unlock()
			return pu, err
		}
	}
	return tr
}

func (g *grpcExchange) answered() bool { return g.resp != nil }

func (g *grpcExchange) close() { g.tr.CloseIdleConnections() }

func (g *grpcExchange) run(ctx context.Context) error {
	p := g.p
	p.mu.Lock()
	p.hopURL = p.opts.URL
	p.serverName = p.opts.URL.Hostname()
	if tc := p.opts.TLSConfig; tc != nil && tc.ServerName != "" {
		p.serverName = tc.ServerName
	}
	p.mu.Unlock()
	resp, err := g.tr.RoundTrip(g.req)
	if err != nil {
		return err
	}
	g.resp = resp
	p.mu.Lock()
	if _, ok := p.timings[PhaseTTFB]; !ok {
		if start := p.requestStart(); !start.IsZero() {
			end := p.firstByte
			if end.IsZero() {
				end = time.Now()
			}
			p.record(PhaseTTFB, end.Sub(start))
		}
	}
	p.mu.Unlock()
	p.setStage(classify.StageBody)
	g.ans, err = readGRPC(resp, g.service)
	g.read = true
	resp.Body.Close()
	end := time.Now()
	p.mu.Lock()
	if !p.firstByte.IsZero() {
		p.record(PhaseTransfer, end.Sub(p.firstByte))
	}
	if err == nil {
		p.stage = classify.StageDone
	}
	p.mu.Unlock()
	return err
}

func (g *grpcExchange) describe(err error, _ time.Time, res *Result, obs *classify.Observation, f *classify.Facts) {
	obs.Protocol = classify.ProtoGRPC
	info := g.ans.Info
	info.Service = g.service
	info.Message = g.p.opts.Redactor.String(info.Message)
	res.GRPC = &info
	f.GRPCService = g.service
	if g.resp == nil {
		if err != nil && g.p.opts.URL.Scheme == "grpc" && g.p.stage == classify.StageHeaders {
			f.GRPCSeen = g.p.opts.Redactor.String(seenText(g.first.get()))
			obs.NoPreface = f.GRPCSeen != ""
		}
		return
	}
	res.HTTPVersion = g.resp.Proto
	if g.resp.TLS != nil {
		g.p.tlsState = g.resp.TLS
	}
	if err != nil || !g.read {
		return
	}
	a := &classify.GRPCAnswer{NotGRPC: g.ans.Protocol != "", Serving: g.ans.Serving}
	if info.Code != nil {
		a.Code = *info.Code
		f.GRPCCode, f.GRPCCodeName = *info.Code, info.CodeName
	} else {
		a.NotGRPC = true
	}
	if a.Code == GRPCCodeOK && !g.ans.HasMessage {
		a.NotGRPC = true
	}
	obs.GRPC = a
	f.GRPCStatus, f.GRPCMessage, f.GRPCSeen = info.Status, info.Message, g.ans.Protocol
}
