// Package probe runs one HTTP(S) probe on a fresh connection and records what
// happened: the phases it went through (also when it failed part-way), the
// address it dialled, the TLS chain it was shown, and the raw error with the
// stage it happened in. It never prints; classify names the outcome.
package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
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

// afterBody, when set (by tests only), runs between the body read and the
// timers stopping: the moment a late window must not count.
var afterBody func(*run)

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
	p := &run{opts: opts, start: time.Now(), timings: Timings{}}
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
	// attempts are the failed dials of the last connect, in the order of
	// the address list (kept when every address failed).
	attempts []DialAttempt
	// stageStart is when the running stage began, for the partial
	// duration of a phase that a window or an error cut short.
	stageStart time.Time
	finished   bool
	tlsState   *tls.ConnectionState
	wrote      time.Time
	// wroteHeaders is when the request headers went out.
	wroteHeaders time.Time
	firstByte    time.Time

	// The hop being requested: its URL, whether it goes through a proxy
	// (and which), and the name its certificate must carry.
	hopURL     *url.URL
	proxied    bool
	proxyURL   *url.URL
	serverName string

	cancel      context.CancelCauseFunc
	stopped     bool
	connWin     window
	readWin     window
	maxWin      window
	windowStage classify.Stage
	windowAddr  string
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

	ctx, cancel := context.WithCancelCause(parent)
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
	if err == nil {
		p.setStage(classify.StageBody)
		body, err = o.Expect.scanBody(resp.Body, o.MaxBody)
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
	// may still be running: record the cut-short phase here, hand out a
	// copy, and let late hooks write only to the old map.
	p.finished = true
	if ph, ok := stagePhase[p.stage]; ok && !p.stageStart.IsZero() {
		if _, done := p.timings[ph]; !done {
			p.timings[ph] = now.Sub(p.stageStart)
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
	case err != nil && errors.As(cause, &win):
		// A window counts only when it ended the probe with an error.
		obs.WindowClosed = true
		obs.Stage = p.windowStage
		res.Address = p.windowAddr
		err = p.windowText(win)
	}
	if err != nil && len(p.attempts) > 1 && !obs.WindowClosed {
		res.DialErrors = append([]DialAttempt(nil), p.attempts...)
		for i := range res.DialErrors {
			res.DialErrors[i].Error = o.Redactor.String(res.DialErrors[i].Error)
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
		if p.hopURL != nil && p.hopURL.Scheme == "https" {
			return fmt.Errorf("proxy CONNECT did not answer within %s%s", w, at)
		}
		return fmt.Errorf("proxy did not answer the request within %s%s: the proxy or the server behind it hangs", w, at)
	case classify.StageTLS:
		what = "TLS handshake" + to + " did not finish"
	case classify.StageHeaders:
		what = "no response headers"
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
		},
		TLSHandshakeStart: func() {
			p.mu.Lock()
			defer p.mu.Unlock()
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
			if p.proxied && p.hopURL != nil && p.hopURL.Scheme == "http" {
				// Plain HTTP through a proxy: the answer is the proxy's
				// to give.
				p.enter(classify.StageProxy)
				return
			}
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
			// written: count from the headers written then.
			if p.wrote.IsZero() {
				p.wrote = p.wroteHeaders
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
// carry secrets) and keeps the rest of Go's text.
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
