package httpprobe

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
)

// httpExchange is the HTTP(S) protocol: one request (and the redirects it
// follows with --follow), its body read through the cap while the body
// conditions look at it.
type httpExchange struct {
	p    *session.Probe
	req  *http.Request
	tr   *http.Transport
	rt   roundTripped
	body expect.Body
	// letGo, when set, closes the connection under the body before the
	// body is closed: net/http's body of a response it did not read
	// itself (http.ReadResponse's), closed early, reads a chunked body to
	// its end, and an endless one for as long as the window allows. (An
	// interface, not a func: a method value costs an allocation a probe.)
	letGo interface{ Close() }
}

// New builds the request (traced) and the transport of one probe; the
// common case (plain HTTP/1.1 to the URL itself) takes the HTTP/1.1 exchange
// instead (http1.go), unless a test turned it off.
func New(ctx context.Context, p *session.Probe) (session.Exchange, error) {
	if !p.Hooks.Transport && HTTP1Fits(p) {
		return newHTTP1(ctx, p)
	}
	req, err := NewRequest(TraceContext(p, ctx), p.Opts)
	if err != nil {
		return nil, err
	}
	countBody(p, req)
	return &httpExchange{p: p, req: req, tr: transport(p)}, nil
}

func (h *httpExchange) Answered() bool { return h.rt.resp != nil }

// Close: net/http lets a dial outlive its cancelled request (for a later
// request to use); a probe has none, and CloseIdleConnections cancels such
// dials — else each probe of a silent port leaves a dial behind for the
// kernel's SYN timeout (goleak; scripts/soak.sh).
func (h *httpExchange) Close() {
	if h.tr != nil {
		h.tr.CloseIdleConnections()
	}
}

func (h *httpExchange) Run(ctx context.Context) error {
	h.rt = roundTrips(h.p, ctx, h.tr, h.req)
	return h.readAnswer()
}

// readAnswer takes the answer the round trip gave (h.rt): ttfb, a 101, and
// the body read through the cap while the body conditions look at it.
func (h *httpExchange) readAnswer() error {
	p, o := h.p, h.p.Opts
	resp, err := h.rt.resp, h.rt.err
	if resp != nil {
		// The headers are here: ttfb is known even when the first-byte
		// hook raced the request-written ones (HTTP/2) or never fired.
		p.HeadersArrived()
		if p.Hooks.AfterHeaders != nil {
			p.Hooks.AfterHeaders(p)
		}
	}
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// A 101 is an answer: the connection now speaks another
		// protocol, and nothing more of HTTP will come. Report the
		// status and close.
		resp.Body.Close()
		p.Mu.Lock()
		p.Stage = classify.StageDone
		p.Mu.Unlock()
		return nil
	}
	p.SetStage(classify.StageBody)
	// blackbox's compression decodes the body it asked for.
	r, enc := decodedBody(resp, o.Expect.ReadsBody() || o.Expect.Answer.Encoding != "")
	h.body, err = readBody(r, o.MaxBody, &o.Expect)
	h.body.Encoding = enc
	if err != nil && corruptGzip(err) {
		// The bytes arrived; they are not gzip: the body conditions
		// fail, saying so (the network did nothing wrong).
		h.body.DecodeErr = err.Error()
		err = nil
	}
	if err == nil && !h.body.Truncated {
		// Read to its end: the trailer fields, if any came, are in.
		h.body.Trailer = sentTrailer(resp.Trailer)
	}
	if h.letGo != nil {
		h.letGo.Close()
	}
	resp.Body.Close()
	if p.Hooks.AfterBody != nil {
		p.Hooks.AfterBody(p)
	}
	p.BodyRead(err)
	return err
}

func (h *httpExchange) Describe(err error, now time.Time, res *result.Result, obs *classify.Observation, f *classify.Facts) {
	p, o, resp := h.p, h.p.Opts, h.rt.resp
	res.Hops = h.rt.hops
	res.Downgrade = h.rt.downgrade
	f.CredentialsDropped = h.rt.credentialsDropped
	if resp == nil {
		return
	}
	res.HTTPStatus = resp.StatusCode
	res.HTTPVersion = resp.Proto
	res.RetryAfter = expect.RetryAfter(session.HeaderValue(resp.Header, "Retry-After"), now)
	res.BodyTruncated = h.body.Truncated
	res.ContentLength, res.BodyRead = resp.ContentLength, h.body.Read
	// Most answers have none: ParseTime of "" would build three errors.
	if v := session.HeaderValue(resp.Header, "Last-Modified"); v != "" {
		if lm, err := http.ParseTime(v); err == nil {
			res.LastModified = lm
		}
	}
	obs.StatusCode = resp.StatusCode
	obs.StatusExpected = o.Expect.Status.Contains(resp.StatusCode)
	f.Status, f.Want = resp.Status, o.Expect.Status.String()
	if h.rt.location != "" {
		obs.HasLocation = true
		res.Redirect = redirect(p, resp.Request.URL, h.rt.location)
		f.Location, f.OtherHost, f.BadLocation = res.Redirect.Location, res.Redirect.OtherHost, res.Redirect.Invalid
		f.Limited, f.Hops, f.Follow = h.rt.limited, len(h.rt.hops), o.Follow
		f.Loop = h.rt.loop
	}
	if resp.TLS != nil {
		p.TLSState = resp.TLS
	}
	if p.Forward {
		// A forward proxy answers for the server; an answer carrying
		// the proxy's own error marks is the proxy's, not the server's.
		if d := session.ProxyDetail(resp.Header); d != "" {
			obs.ProxyGenerated = true
			f.ProxyDetail = o.Redactor.String(d)
		}
	}
	if resp.TLS != nil && resp.TLS.Version == tls.VersionTLS13 && resp.StatusCode == http.StatusForbidden &&
		session.ClientCertGiven(o) && !p.CertAsked {
		// Go has no TLS 1.3 post-handshake authentication: a server
		// that asks for the certificate after the handshake (Apache's
		// per-location SSLVerifyClient) gets none, and may answer 403.
		f.PostHandshakeAuth = true
	}
	if err == nil && obs.StatusExpected {
		msg := o.Expect.Check(conditionHeader(resp, o.Expect.HeaderRE), h.body, o.MaxBody)
		if msg == "" && !o.Expect.Answer.IsZero() {
			msg = o.Expect.Answer.CheckAnswer(resp.TLS != nil, resp.Proto, session.HeaderValue(resp.Header, "Content-Encoding"), h.body.Truncated, o.MaxBody)
			res.AnswerConditionFailed = msg != ""
		}
		if msg != "" {
			obs.ConditionFailed = true
			f.Condition = msg
		}
	}
	if err == nil && obs.StatusExpected && !obs.ConditionFailed {
		if msg := o.Expect.Degraded(h.body, o.MaxBody); msg != "" {
			obs.Degraded = true
			res.Degraded = o.Redactor.String(msg)
		}
	}
	if !obs.StatusExpected || obs.ConditionFailed || obs.Degraded || resp.StatusCode/100 != 2 {
		// A health endpoint says why it failed in its body and headers:
		// the answer's own words, shown with the result.
		more := h.body.Truncated || h.body.Read > int64(len(h.body.Head))
		res.BodyExcerpt = expect.Excerpt(h.body.Head, more, o.Redactor.String)
		res.WWWAuthenticate = o.Redactor.String(strings.Join(resp.Header.Values("Www-Authenticate"), ", "))
		res.ProxyAuthenticate = o.Redactor.String(strings.Join(resp.Header.Values("Proxy-Authenticate"), ", "))
	}
}

// conditionHeader is the header the --expect-header conditions judge: the
// response's as the server sent it. When Go decoded the gzip it asked for
// itself (the Transport, and the HTTP/1.1 exchange as it does), it removed
// Content-Encoding: gzip, which the server did send (curl's -D shows it),
// and which a condition on it must see. Content-Length went with it and
// cannot be given back (the Transport keeps no copy); with -H
// 'Accept-Encoding: gzip' nothing is decoded by Go and every header is as
// sent. The copy is made only when a header condition would see it.
func conditionHeader(resp *http.Response, conds []expect.HeaderExpect) http.Header {
	if !resp.Uncompressed || len(conds) == 0 {
		return resp.Header
	}
	h := resp.Header.Clone()
	h.Set("Content-Encoding", "gzip")
	return h
}

// sentTrailer is the trailer fields that came, nil when none did (net/http
// lists a field the Trailer header announced even when it never came).
func sentTrailer(t http.Header) http.Header {
	for _, vv := range t {
		if len(vv) > 0 {
			return t
		}
	}
	return nil
}

// proxyTLSBegins says a handshake that starts now is an https:// proxy's
// own (the first of the connection, to the proxy), and marks it so (p.Mu
// held).
func proxyTLSBegins(p *session.Probe) bool {
	if !p.Proxied || p.ProxyURL == nil || p.ProxyURL.Scheme != "https" || p.ProxyTLSStarted {
		return false
	}
	p.ProxyTLSStarted, p.InProxyTLS = true, true
	return true
}

// TraceContext follows the request through net/http's trace hooks: each
// moves the stage, records a phase or arms a window.
func TraceContext(p *session.Probe, ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn: func(string) {
			p.Mu.Lock()
			defer p.Mu.Unlock()
			p.Enter(p.FirstStage(p.HopURL, p.Proxied))
			p.Arm(&p.ConnWin, p.Opts.ConnectTimeout)
			p.ConnDeadline = time.Now().Add(p.Opts.ConnectTimeout)
		},
		TLSHandshakeStart: func() {
			p.Mu.Lock()
			defer p.Mu.Unlock()
			if proxyTLSBegins(p) {
				// The proxy's own handshake is part of reaching the
				// proxy: its time is the proxy phase's.
				return
			}
			p.LeaveProxy()
			p.Enter(classify.StageTLS)
		},
		TLSHandshakeDone: func(cs tls.ConnectionState, err error) {
			p.Mu.Lock()
			defer p.Mu.Unlock()
			if p.InProxyTLS {
				p.InProxyTLS = false
				p.ProxyTLSOK = err == nil
				if err == nil {
					p.ProxyTLSState = &cs
				}
				return
			}
			// The stage is still tls: GotConn comes after this.
			p.Record(result.PhaseTLS, time.Since(p.StageStart))
			if err == nil {
				p.TLSState = &cs
			}
		},
		GotConn: func(httptrace.GotConnInfo) {
			p.Mu.Lock()
			defer p.Mu.Unlock()
			p.Disarm(&p.ConnWin)
			p.ConnReady = time.Now()
			if p.Forward {
				// Plain HTTP through an HTTP proxy: the answer is the
				// proxy's to give.
				p.Enter(classify.StageProxy)
				return
			}
			p.LeaveProxy() // a SOCKS5 tunnel to a plain-HTTP server
			p.Enter(classify.StageHeaders)
		},
		WroteHeaders: func() {
			p.Mu.Lock()
			defer p.Mu.Unlock()
			p.WroteHeaders = time.Now()
			if session.BodyLen(p.Opts) > 0 && p.FirstByte.IsZero() {
				// The body streams from here, the answer may come
				// while it does: the read window opens with the
				// headers out, as on the HTTP/1.1 exchange.
				p.Wrote = p.WroteHeaders
				p.Arm(&p.ReadWin, p.Opts.ReadTimeout)
			}
		},
		WroteRequest: func(httptrace.WroteRequestInfo) {
			p.Mu.Lock()
			defer p.Mu.Unlock()
			if p.FirstByte.IsZero() && p.Wrote.IsZero() {
				p.Wrote = time.Now()
				p.Arm(&p.ReadWin, p.Opts.ReadTimeout)
			}
		},
		GotFirstResponseByte: func() {
			p.Mu.Lock()
			defer p.Mu.Unlock()
			p.FirstByte = time.Now()
			// HTTP/2 may see the answer before it reports the request
			// written (or even its headers written): count from the
			// headers written, else from the connection ready.
			if p.Wrote.IsZero() {
				p.Wrote = p.RequestStart()
				p.Arm(&p.ReadWin, p.Opts.ReadTimeout)
			}
			if !p.Wrote.IsZero() {
				p.Record(result.PhaseTTFB, p.FirstByte.Sub(p.Wrote))
			}
		},
	})
}

// transport is a probe's own transport: a fresh connection through the
// run's dialler and TLS capture, the proxy the options choose.
func transport(p *session.Probe) *http.Transport {
	o := p.Opts
	tr := &http.Transport{
		DialContext:        p.Dial,
		DisableKeepAlives:  true,
		DisableCompression: removesHeader(o, "Accept-Encoding"),
		// Our own windows bound every phase; the transport's would only
		// make the reasons less precise.
		TLSHandshakeTimeout:    0,
		MaxResponseHeaderBytes: 1 << 20,
		// One connection, one small request and a health answer: net/http's
		// 4 KiB buffers each way were a third of what a probe allocated
		// (a sweep of 10,000 probes is 10,000 connections). Longer lines
		// and bodies still pass, in more reads.
		ReadBufferSize:  1 << 10,
		WriteBufferSize: 1 << 10,
	}
	if o.HTTP2PriorKnowledge {
		// h2c with prior knowledge: HTTP/2 from the first byte on
		// cleartext, as curl's --http2-prior-knowledge (net/http speaks
		// HTTP/1.1 to http:// whenever HTTP/1 is allowed).
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
		tr.Protocols.SetHTTP2(true)
		tr.TLSClientConfig = p.TLSConfig()
	} else if plainOnly(p) {
		// No TLS and no HTTP/2 can happen: leave both unset. With a
		// custom DialContext and no TLS config, net/http never builds
		// its HTTP/2 transport, which it would otherwise do on the
		// first RoundTrip (ForceAttemptHTTP2) for nothing.
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP1(true)
	} else {
		tr.TLSClientConfig = p.TLSConfig()
		tr.ForceAttemptHTTP2 = true
	}
	tr.OnProxyConnectResponse = func(_ context.Context, _ *url.URL, _ *http.Request, resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			p.Mu.Lock()
			p.ProxyStatus, p.ProxyStatusLine, p.ProxyHeader = resp.StatusCode, resp.Status, resp.Header.Clone()
			p.Mu.Unlock()
		}
		return nil
	}
	tr.Proxy = func(r *http.Request) (*url.URL, error) {
		return p.UseProxy(r.URL, func(pu *url.URL) {
			p.Forward = pu != nil && r.URL.Scheme == "http" && (pu.Scheme == "http" || pu.Scheme == "https")
		})
	}
	return tr
}

// plainOnly reports whether this probe can only ever speak plain HTTP/1.1
// over TCP: an http:// URL, no redirects followed (--follow 0, so no hop
// can go to https), and no proxy for the URL that is itself reached over
// TLS. Then the transport needs neither a TLS configuration nor HTTP/2.
// When in doubt (a proxy function that fails) it says false and the
// transport is set up in full.
func plainOnly(p *session.Probe) bool {
	o := p.Opts
	if o.URL == nil || o.URL.Scheme != "http" || o.Follow != 0 {
		return false
	}
	if o.Proxy == nil {
		return true
	}
	pu, err := o.Proxy(o.URL)
	return err == nil && (pu == nil || pu.Scheme != "https")
}
