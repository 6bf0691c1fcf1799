// Package probe runs one HTTP(S) probe on a fresh connection and records what
// happened: the phases it went through (also when it failed part-way), the
// address it dialled, the TLS chain it was shown, and the raw error with the
// stage it happened in. It never prints; classify names the outcome.
package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/crash"
)

// windowError is the cause a probe's own window cancels its context with.
type windowError struct {
	flag  string
	limit time.Duration
}

func (w *windowError) Error() string { return fmt.Sprintf("%s %s", w.flag, w.limit) }

// maxTimeBackstop is how long after --max-time's timer the probe's context
// deadline falls.
const maxTimeBackstop = 50 * time.Millisecond

// afterBody, when set (by tests only), runs between the body read and the
// timers stopping: the moment a late window must not count.
var afterBody func(*run)

// afterHeaders, when set (by tests only), runs between the response
// headers returned and the body stage entered: a window that closes there
// closes on the body.
var afterHeaders func(*run)

// window is one of the probe's timers. A timer that fires after it was
// disarmed, re-armed or after the probe stopped its timers counts for
// nothing: gen and active are checked under run.mu when it fires.
type window struct {
	err    *windowError
	timer  *time.Timer
	gen    int
	active bool
}

// Run probes once. It returns within opts.MaxTime (plus scheduling noise)
// whatever the server does; ctx cancellation (Ctrl-C) ends it early with
// Result.Canceled set.
func Run(ctx context.Context, opts *Options) Result {
	if opts.AllAddresses {
		return runAll(ctx, opts)
	}
	p := &run{opts: opts, start: time.Now(), timings: Timings{}}
	p.dialIdle = sync.NewCond(&p.mu)
	return p.do(ctx)
}

// run is the state of one probe; the trace hooks fire on transport
// goroutines, so everything below mu is guarded.
type run struct {
	opts  *Options
	start time.Time

	mu        sync.Mutex
	stage     classify.Stage
	timings   Timings
	address   string
	family    int
	dnsAnswer classify.DNSAnswer
	// resolverErr is the first error that said a DNS server could not be
	// reached (refused, no route).
	resolverErr error
	// attempts are the dial attempts of the last connect, in the order
	// they started.
	attempts []DialAttempt
	// dialErr is the last connect's error when an address answered for
	// itself (refused, unreachable) and none connected: it is the probe's
	// answer even when the connect window closed on another address.
	dialErr error
	// dialing counts the dials running; dialIdle is signalled (with mu)
	// when it drops to 0, so the result waits for a dial cut short.
	dialing  int
	dialIdle *sync.Cond
	// connDeadline is when the connect window of the current hop closes.
	connDeadline time.Time
	// stageStart is when the running stage began, for the partial
	// duration of a phase that a window or an error cut short.
	stageStart time.Time
	finished   bool
	tlsState   *tls.ConnectionState
	wrote      time.Time
	// wroteHeaders is when the request headers went out.
	wroteHeaders time.Time
	// connReady is when the connection was handed to the request
	// (GotConn): the start of ttfb when no write was reported.
	connReady time.Time
	firstByte time.Time

	// The hop being requested: its URL, whether it goes through a proxy
	// (and which), and the name its certificate must carry.
	hopURL   *url.URL
	proxied  bool
	proxyURL *url.URL
	// forward is a plain-HTTP request through an HTTP proxy: no tunnel,
	// the proxy answers for the server. Otherwise (CONNECT, SOCKS5) what
	// follows the tunnel is the server's.
	forward    bool
	serverName string

	cancel      context.CancelCauseFunc
	stopped     bool
	connWin     window
	readWin     window
	maxWin      window
	windowStage classify.Stage
	windowAddr  string
	// windowThroughProxy: the read window closed on a forward proxy.
	windowThroughProxy bool
}

// setStage enters a stage; its phase's clock starts now.
func (p *run) setStage(s classify.Stage) {
	p.mu.Lock()
	p.enter(s)
	p.mu.Unlock()
}

// enter is setStage with p.mu held.
func (p *run) enter(s classify.Stage) {
	p.stage = s
	p.stageStart = time.Now()
}

// record sets a phase's duration with p.mu held, unless the probe has
// already returned.
func (p *run) record(ph Phase, d time.Duration) {
	if !p.finished {
		p.timings[ph] = d
	}
}

// requestStart is when the request went out, as well as it is known (p.mu
// held): written, else its headers written, else the connection ready.
func (p *run) requestStart() time.Time {
	switch {
	case !p.wrote.IsZero():
		return p.wrote
	case !p.wroteHeaders.IsZero():
		return p.wroteHeaders
	}
	return p.connReady
}

// leaveProxy records the proxy phase when the tunnel through a proxy is up
// (p.mu held).
func (p *run) leaveProxy() {
	if p.stage == classify.StageProxy && !p.forward {
		p.record(PhaseProxy, time.Since(p.stageStart))
	}
}

// stagePhase is the waterfall phase a stage's time belongs to.
var stagePhase = map[classify.Stage]Phase{
	classify.StageDNS:     PhaseDNS,
	classify.StageConnect: PhaseConnect,
	classify.StageTLS:     PhaseTLS,
}

// arm starts (or restarts) a window with p.mu held.
func (p *run) arm(w *window, d time.Duration) {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.gen++
	w.active = true
	gen := w.gen
	w.timer = time.AfterFunc(d, func() { p.fire(w, gen) })
}

// disarm stops a window with p.mu held; a callback already running for it
// sees the new generation and does nothing.
func (p *run) disarm(w *window) {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.gen++
	w.active = false
}

// fire ends the probe because a window closed, remembering the stage that
// was running at that moment, unless the window was stopped meanwhile.
func (p *run) fire(w *window, gen int) {
	defer crash.Recover() // runs on a timer's goroutine
	p.mu.Lock()
	if p.stopped || !w.active || w.gen != gen {
		p.mu.Unlock()
		return
	}
	if p.windowStage == "" {
		p.windowStage = p.stage
		p.windowAddr = p.address
	}
	// Cancel under the lock, so no stage can begin between the stage
	// noted and the cancellation (cancel only closes channels and starts
	// goroutines: it never calls back into the hooks that take p.mu).
	p.cancel(w.err)
	p.mu.Unlock()
}

// stopTimers stops every window; from now on none can count.
func (p *run) stopTimers() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.disarm(&p.connWin)
	p.disarm(&p.readWin)
	p.disarm(&p.maxWin)
}

func (p *run) do(parent context.Context) Result {
	o := p.opts
	p.connWin.err = &windowError{"--connect-timeout", o.ConnectTimeout}
	p.readWin.err = &windowError{"--read-timeout", o.ReadTimeout}
	p.maxWin.err = &windowError{"--max-time", o.MaxTime}

	// --max-time is also the context's deadline, a moment after its
	// timer: the timer notes the stage that was running, the deadline
	// bounds the probe even if the timer's goroutine is starved.
	dctx, dcancel := context.WithDeadlineCause(parent, p.start.Add(o.MaxTime+maxTimeBackstop), p.maxWin.err)
	defer dcancel()
	ctx, cancel := context.WithCancelCause(dctx)
	defer cancel(nil)
	p.cancel = cancel
	p.mu.Lock()
	p.enter(p.firstStage(o.URL, false))
	p.arm(&p.maxWin, o.MaxTime)
	p.mu.Unlock()
	defer p.stopTimers()

	res := Result{URL: o.Redactor.URL(o.URL), Started: p.start}

	req, err := p.newRequest(ctx)
	if err != nil {
		// Options are validated before a probe runs; this is a bug guard.
		res.Outcome, res.Reason = classify.Unreachable, classify.ProtocolError
		res.Error = o.Redactor.String(err.Error())
		return res
	}

	// net/http lets a dial outlive its cancelled request (for a later
	// request to use); a probe has none, and CloseIdleConnections cancels
	// such dials — else each probe of a silent port leaves a dial behind
	// for the kernel's SYN timeout (goleak; scripts/soak.sh).
	tr := p.transport()
	defer tr.CloseIdleConnections()
	ex := p.exchange(ctx, tr, req)
	resp, err := ex.resp, ex.err
	var body bodyResult
	if resp != nil {
		// The headers are here: ttfb is known even when the first-byte
		// hook raced the request-written ones (HTTP/2) or never fired.
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
	}
	if afterHeaders != nil && resp != nil {
		afterHeaders(p)
	}
	if err == nil {
		p.setStage(classify.StageBody)
		r, enc := decodedBody(resp, o.Expect.readsBody())
		body, err = o.Expect.scanBody(r, o.MaxBody)
		body.encoding = enc
		if err != nil && corruptGzip(err) {
			// The bytes arrived; they are not gzip: the body conditions
			// fail, saying so (the network did nothing wrong).
			body.decodeErr = err.Error()
			err = nil
		}
		resp.Body.Close()
		if afterBody != nil {
			afterBody(p)
		}
		res.BodyTruncated = body.truncated
		end := time.Now()
		p.mu.Lock()
		if !p.firstByte.IsZero() {
			p.record(PhaseTransfer, end.Sub(p.firstByte))
		}
		if err == nil {
			p.stage = classify.StageDone
		}
		p.mu.Unlock()
	}
	// Every timer stops before anything is judged: a window that closes
	// after the last byte was read must not turn a finished probe into a
	// timeout.
	p.stopTimers()
	now := time.Now()

	p.mu.Lock()
	defer p.mu.Unlock()
	// The transport returns as soon as the context ends, while its dial
	// may still be running: wait for it (a cancelled dial ends at once),
	// so its attempts and their answers are known.
	if err != nil && ctx.Err() != nil {
		for p.dialing > 0 {
			p.dialIdle.Wait()
		}
	}
	// Record the cut-short phase here, hand out a copy, and let late
	// hooks write only to the old map.
	p.finished = true
	if ph, ok := stagePhase[p.stage]; ok && !p.stageStart.IsZero() && (p.stage != classify.StageProxy || !p.forward) {
		if _, done := p.timings[ph]; !done {
			p.timings[ph] = now.Sub(p.stageStart)
		}
	}
	st := p.stage
	if p.windowStage != "" {
		st = p.windowStage
	}
	if st == classify.StageHeaders || (st == classify.StageProxy && p.forward) {
		// Waiting for headers that never came: the wait is the ttfb
		// phase, cut short, so the waterfall shows it.
		if _, done := p.timings[PhaseTTFB]; !done {
			if start := p.requestStart(); !start.IsZero() {
				p.timings[PhaseTTFB] = now.Sub(start)
			}
		}
	}
	p.timings[PhaseTotal] = now.Sub(p.start)
	res.Timings = maps.Clone(p.timings)
	res.Address = p.address
	res.IPFamily = p.family
	res.Hops = ex.hops
	if p.proxied {
		res.Proxy = o.Redactor.URL(p.proxyURL)
	}

	obs := classify.Observation{Stage: p.stage, Proxied: p.proxied, DNS: p.dnsAnswer, Now: now}
	if resp != nil {
		res.HTTPStatus = resp.StatusCode
		res.HTTPVersion = resp.Proto
		res.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), now)
		obs.StatusCode = resp.StatusCode
		obs.StatusExpected = o.Expect.Status.Contains(resp.StatusCode)
		if ex.location != "" {
			obs.HasLocation = true
			res.Redirect = p.redirect(resp.Request.URL, ex.location)
		}
		if resp.TLS != nil {
			p.tlsState = resp.TLS
		}
	}
	res.TLS = tlsInfo(p.tlsState, err, now)

	cause := context.Cause(ctx)
	var win *windowError
	switch {
	case parent.Err() != nil:
		res.Canceled = true
		err = parent.Err()
	case err != nil && errors.As(cause, &win) && p.windowStage == classify.StageConnect && p.dialErr != nil:
		// The window closed on one address while another had answered
		// for itself (refused, unreachable): that answer is the probe's.
		obs.Stage = classify.StageConnect
		err = p.dialErr
		res.Address, res.IPFamily = p.address, p.family
	case err != nil && errors.As(cause, &win):
		// A window counts only when it ended the probe with an error.
		obs.WindowClosed = true
		if p.windowStage == "" {
			// The deadline closed it before the timer did.
			p.windowStage, p.windowAddr = p.stage, p.address
		}
		obs.Stage = p.windowStage
		if resp != nil && (obs.Stage == classify.StageHeaders || obs.Stage == classify.StageProxy) {
			// The headers had arrived (HTTP/2 can hand them over a
			// moment before the body stage is entered): the window
			// closed on the body.
			obs.Stage = classify.StageBody
			p.windowStage = classify.StageBody
		}
		if obs.Stage == classify.StageProxy && p.forward {
			// A forward proxy that says nothing may be waiting for the
			// server behind it: a timeout, like the server's own.
			obs.Stage = classify.StageHeaders
			p.windowStage = classify.StageHeaders
			p.windowThroughProxy = true
		}
		res.Address = p.windowAddr
		err = p.windowText(win)
	}
	if len(p.attempts) > 1 {
		res.DialAttempts = append([]DialAttempt(nil), p.attempts...)
		for i := range res.DialAttempts {
			res.DialAttempts[i].Error = o.Redactor.String(res.DialAttempts[i].Error)
		}
	}
	obs.Err = err
	if err == nil && resp != nil && obs.StatusExpected {
		if msg := o.Expect.check(resp, body, o.MaxBody); msg != "" {
			obs.ConditionFailed = true
			res.Error = o.Redactor.String(msg)
		}
	}
	res.Outcome, res.Reason = classify.Classify(obs)
	switch {
	case err != nil && res.Reason == classify.ProxyError && !obs.WindowClosed:
		res.Error = o.Redactor.String("proxy " + res.Proxy + ": " + errorText(err))
	case err != nil && res.Reason == classify.TLSInsecureAlgorithm:
		res.Error = insecureAlgorithmText(err)
	case err != nil:
		res.Error = o.Redactor.String(errorText(err))
	case res.Reason == classify.ProxyError:
		res.Error = fmt.Sprintf("proxy %s answered %s", res.Proxy, resp.Status)
	case res.Reason == classify.Redirect:
		res.Error = p.redirectText(resp.StatusCode, res.Redirect, ex)
	case res.Reason == classify.HTTPStatus:
		res.Error = fmt.Sprintf("unexpected status %d (want %s)", resp.StatusCode, o.Expect.Status)
	}
	if res.Error != "" && ex.credentialsDropped && res.Reason != classify.OK {
		res.Error += " (credentials were not sent to the redirect's origin)"
	}
	return res
}

// firstStage is the stage a connection to u starts in (p.mu held): DNS when
// its host must be looked up, otherwise connect.
func (p *run) firstStage(u *url.URL, proxied bool) classify.Stage {
	if proxied || u == nil {
		return classify.StageConnect
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = DefaultPort(u.Scheme)
	}
	if _, ok := p.opts.Resolve[strings.ToLower(host)+":"+port]; ok {
		return classify.StageConnect
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return classify.StageConnect
	}
	return classify.StageDNS
}

// windowText says which window closed during which phase, e.g.
// "no response headers within --read-timeout 2s". It never is empty.
func (p *run) windowText(w *windowError) error {
	host := p.opts.URL.Hostname()
	if p.hopURL != nil {
		host = p.hopURL.Hostname()
	}
	to := ""
	if p.windowAddr != "" {
		to = " to " + p.windowAddr
	}
	var what string
	switch p.windowStage {
	case classify.StageDNS:
		what = "DNS lookup of " + host + " did not finish"
	case classify.StageConnect:
		what = "TCP connect" + to + " did not finish"
		if p.proxied {
			what = "TCP connect to the proxy" + to + " did not finish"
		}
	case classify.StageProxy:
		at := ""
		if p.windowAddr != "" {
			at = " (proxy " + p.windowAddr + ")"
		}
		if p.proxyURL != nil && strings.HasPrefix(p.proxyURL.Scheme, "socks") {
			return fmt.Errorf("SOCKS5 proxy did not open the connection within %s%s", w, at)
		}
		return fmt.Errorf("proxy CONNECT did not answer within %s%s", w, at)
	case classify.StageTLS:
		what = "TLS handshake" + to + " did not finish"
	case classify.StageHeaders:
		what = "no response headers"
		if p.windowThroughProxy {
			at := ""
			if p.windowAddr != "" {
				at = " " + p.windowAddr
			}
			return fmt.Errorf("no response headers within %s through the proxy%s (the proxy or the server behind it hangs)", w, at)
		}
	default:
		what = "response body not complete"
	}
	return fmt.Errorf("%s within %s", what, w)
}

func (p *run) newRequest(ctx context.Context) (*http.Request, error) {
	o := p.opts
	var body io.Reader
	if o.Body != nil {
		body = strings.NewReader(string(o.Body))
	}
	u := *o.URL
	u.User = nil // credentials go in the header, never in text
	req, err := http.NewRequestWithContext(p.traceContext(ctx), o.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, vs := range o.Header {
		if len(vs) == 1 && vs[0] == "" && k != "User-Agent" {
			// "Name:" removes the header (curl's rule); the transport's
			// own Accept-Encoding is turned off in transport().
			continue
		}
		req.Header[k] = append([]string(nil), vs...)
	}
	if o.Host != "" {
		req.Host = o.Host
	}
	if _, set := o.Header["User-Agent"]; !set {
		req.Header.Set("User-Agent", o.UserAgent)
	}
	// An explicit -H Authorization wins over -u and URL userinfo (curl's
	// rule).
	if _, set := o.Header["Authorization"]; !set {
		switch {
		case o.HasUser:
			req.SetBasicAuth(o.User, o.Password)
		case o.URL.User != nil:
			pw, _ := o.URL.User.Password()
			req.SetBasicAuth(o.URL.User.Username(), pw)
		}
	}
	return req, nil
}

// removesHeader reports whether -H 'Name:' asked to remove a header.
func (o *Options) removesHeader(name string) bool {
	vs, ok := o.Header[name]
	return ok && len(vs) == 1 && vs[0] == ""
}

func (p *run) traceContext(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn: func(string) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.enter(p.firstStage(p.hopURL, p.proxied))
			p.arm(&p.connWin, p.opts.ConnectTimeout)
			p.connDeadline = time.Now().Add(p.opts.ConnectTimeout)
		},
		TLSHandshakeStart: func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.leaveProxy()
			p.enter(classify.StageTLS)
		},
		TLSHandshakeDone: func(cs tls.ConnectionState, err error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			// The stage is still tls: GotConn comes after this.
			p.record(PhaseTLS, time.Since(p.stageStart))
			if err == nil {
				p.tlsState = &cs
			}
		},
		GotConn: func(httptrace.GotConnInfo) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.disarm(&p.connWin)
			p.connReady = time.Now()
			if p.forward {
				// Plain HTTP through an HTTP proxy: the answer is the
				// proxy's to give.
				p.enter(classify.StageProxy)
				return
			}
			p.leaveProxy() // a SOCKS5 tunnel to a plain-HTTP server
			p.enter(classify.StageHeaders)
		},
		WroteHeaders: func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.wroteHeaders = time.Now()
		},
		WroteRequest: func(httptrace.WroteRequestInfo) {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.firstByte.IsZero() {
				p.wrote = time.Now()
				p.arm(&p.readWin, p.opts.ReadTimeout)
			}
		},
		GotFirstResponseByte: func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.firstByte = time.Now()
			// HTTP/2 may see the answer before it reports the request
			// written (or even its headers written): count from the
			// headers written, else from the connection ready.
			if p.wrote.IsZero() {
				p.wrote = p.requestStart()
				p.arm(&p.readWin, p.opts.ReadTimeout)
			}
			if !p.wrote.IsZero() {
				p.record(PhaseTTFB, p.firstByte.Sub(p.wrote))
			}
		},
	})
}

func (p *run) transport() *http.Transport {
	o := p.opts
	tr := &http.Transport{
		DialContext:        p.dial,
		DisableKeepAlives:  true,
		DisableCompression: o.removesHeader("Accept-Encoding"),
		// Our own windows bound every phase; the transport's would only
		// make the reasons less precise.
		TLSHandshakeTimeout:    0,
		MaxResponseHeaderBytes: 1 << 20,
	}
	if p.plainOnly() {
		// No TLS and no HTTP/2 can happen: leave both unset. With a
		// custom DialContext and no TLS config, net/http never builds
		// its HTTP/2 transport, which it would otherwise do on the
		// first RoundTrip (ForceAttemptHTTP2) for nothing.
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP1(true)
	} else {
		tc := o.TLSConfig.Clone() // net/http writes NextProtos into it: one per transport
		if tc == nil {
			tc = &tls.Config{}
		}
		if !tc.InsecureSkipVerify {
			// Verify after the handshake, so version and cipher are known
			// also when the certificate is refused.
			tc.InsecureSkipVerify = true
			tc.VerifyConnection = p.verifyConnection
		} else {
			tc.VerifyConnection = p.keepState
		}
		tr.TLSClientConfig = tc
		tr.ForceAttemptHTTP2 = true
	}
	tr.Proxy = func(r *http.Request) (*url.URL, error) {
		var pu *url.URL
		var err error
		if o.Proxy != nil {
			pu, err = o.Proxy(r.URL)
		}
		// A proxy's credentials are secrets like the target's.
		o.Redactor.AddURL(pu)
		p.mu.Lock()
		p.proxied, p.proxyURL = pu != nil, pu
		p.forward = pu != nil && r.URL.Scheme == "http" && (pu.Scheme == "http" || pu.Scheme == "https")
		p.mu.Unlock()
		return pu, err
	}
	return tr
}

// plainOnly reports whether this probe can only ever speak plain HTTP/1.1
// over TCP: an http:// URL, no redirects followed (--follow 0, so no hop
// can go to https), and no proxy for the URL that is itself reached over
// TLS. Then the transport needs neither a TLS configuration nor HTTP/2.
// When in doubt (a proxy function that fails) it says false and the
// transport is set up in full.
func (p *run) plainOnly() bool {
	o := p.opts
	if o.URL == nil || o.URL.Scheme != "http" || o.Follow != 0 {
		return false
	}
	if o.Proxy == nil {
		return true
	}
	pu, err := o.Proxy(o.URL)
	return err == nil && (pu == nil || pu.Scheme != "https")
}

// errorText strips the *url.Error wrapper (it repeats the URL, which may
// carry secrets) and Go's internal function names ("readLoopPeekFailLocked:
// "), and keeps the rest of Go's text.
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return dropGoNames(err.Error())
}

// goName matches a word used as an error prefix, at the start or after
// another prefix; dropGoNames drops those that are Go identifiers in
// camelCase (readLoopPeekFailLocked, persistConn.writeLoop).
var goName = regexp.MustCompile(`(^|: )([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)*): `)

func dropGoNames(s string) string {
	return goName.ReplaceAllStringFunc(s, func(m string) string {
		sub := goName.FindStringSubmatch(m)
		if strings.ToLower(sub[2]) == sub[2] {
			return m // "dial", "read", "connect": plain words stay
		}
		return sub[1]
	})
}

// insecureAlgorithmText says which signature was too weak, instead of Go's
// "signed by unknown authority (possibly because of …)".
func insecureAlgorithmText(err error) string {
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) && ua.Cert != nil {
		return fmt.Sprintf("certificate %q is signed with %s, an insecure algorithm: its issuer %q is trusted, the signature is too weak",
			ua.Cert.Subject.String(), ua.Cert.SignatureAlgorithm, ua.Cert.Issuer.String())
	}
	return "certificate signed with an insecure algorithm (SHA-1 or MD5): " + errorText(err)
}
