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
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"slices"
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
	proxied   bool
	dnsAnswer classify.DNSAnswer
	// stageStart is when the running stage began, for the partial
	// duration of a phase that a window or an error cut short.
	stageStart time.Time
	finished   bool
	tlsState   *tls.ConnectionState
	wrote      time.Time
	// wroteHeaders is when the request headers went out.
	wroteHeaders time.Time
	firstByte    time.Time

	cancel      context.CancelCauseFunc
	connTimer   *time.Timer
	readTimer   *time.Timer
	connWindow  *windowError
	readWindow  *windowError
	maxWindow   *windowError
	windowStage classify.Stage
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

func (p *run) do(parent context.Context) Result {
	o := p.opts
	p.connWindow = &windowError{"--connect-timeout", o.ConnectTimeout}
	p.readWindow = &windowError{"--read-timeout", o.ReadTimeout}
	p.maxWindow = &windowError{"--max-time", o.MaxTime}

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	p.cancel = cancel
	maxTimer := time.AfterFunc(o.MaxTime, func() { p.closeWindow(p.maxWindow) })
	defer maxTimer.Stop()
	defer p.stopTimers()

	res := Result{URL: o.Redactor.URL(o.URL), Started: p.start}

	req, err := p.newRequest(ctx)
	if err != nil {
		// Options are validated before a probe runs; this is a bug guard.
		res.Outcome, res.Reason = classify.Unreachable, classify.ProtocolError
		res.Error = o.Redactor.String(err.Error())
		return res
	}
	if o.Proxy != nil {
		if pu, _ := o.Proxy(req.URL); pu != nil {
			p.proxied = true
		}
	}

	client := &http.Client{Transport: p.transport(), CheckRedirect: p.checkRedirect}
	resp, err := client.Do(req)
	var body []byte
	if err == nil {
		p.setStage(classify.StageBody)
		body, res.BodyTruncated, err = readCapped(resp.Body, o.MaxBody)
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
	}
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

	obs := classify.Observation{Stage: p.stage, Proxied: p.proxied, DNS: p.dnsAnswer, Now: now}
	if resp != nil {
		res.HTTPStatus = resp.StatusCode
		res.HTTPVersion = resp.Proto
		res.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), now)
		obs.StatusCode = resp.StatusCode
		obs.StatusExpected = o.Expect.Status.Contains(resp.StatusCode)
		if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
			obs.HasLocation = true
			res.Redirect = p.redirect(resp.Request.URL, loc)
		}
		if resp.TLS != nil {
			p.tlsState = resp.TLS
		}
	}
	res.TLS = tlsInfo(p.tlsState, err, now)

	cause := context.Cause(ctx)
	switch {
	case parent.Err() != nil:
		res.Canceled = true
		err = parent.Err()
	case isWindow(cause):
		obs.WindowClosed = true
		obs.Stage = p.windowStage
		err = p.windowText(cause.(*windowError), err)
	}
	obs.Err = err
	if err == nil && resp != nil && obs.StatusExpected {
		if msg := o.Expect.check(resp, body); msg != "" {
			obs.ConditionFailed = true
			res.Error = o.Redactor.String(msg)
		}
	}
	res.Outcome, res.Reason = classify.Classify(obs)
	if err != nil {
		res.Error = o.Redactor.String(errorText(err))
	} else if res.Reason == classify.Redirect {
		where := "the same host"
		if res.Redirect.OtherHost {
			where = "another host"
		}
		res.Error = fmt.Sprintf("status %d redirects to %s (%s; want %s, or --follow)", resp.StatusCode, res.Redirect.Location, where, o.Expect.Status)
	} else if res.Reason == classify.HTTPStatus {
		res.Error = fmt.Sprintf("unexpected status %d (want %s)", resp.StatusCode, o.Expect.Status)
	}
	return res
}

func isWindow(err error) bool {
	var w *windowError
	return errors.As(err, &w)
}

// closeWindow ends the probe because one of its windows closed, remembering
// the stage that was running at that moment.
func (p *run) closeWindow(w *windowError) {
	defer crash.Recover() // runs on a timer's goroutine
	p.mu.Lock()
	if p.windowStage == "" {
		p.windowStage = p.stage
	}
	p.mu.Unlock()
	p.cancel(w)
}

func (p *run) stopTimers() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.connTimer != nil {
		p.connTimer.Stop()
	}
	if p.readTimer != nil {
		p.readTimer.Stop()
	}
}

// windowText says which window closed during which phase, e.g.
// "no response headers within --read-timeout 2s".
func (p *run) windowText(w *windowError, err error) error {
	what := map[classify.Stage]string{
		classify.StageDNS:     "DNS lookup of " + p.opts.URL.Hostname() + " did not finish",
		classify.StageConnect: "TCP connect did not finish",
		classify.StageTLS:     "TLS handshake did not finish",
		classify.StageHeaders: "no response headers",
		classify.StageBody:    "response body not complete",
		classify.StageDone:    "response body not complete",
	}[p.windowStage]
	if p.address != "" && (p.windowStage == classify.StageConnect || p.windowStage == classify.StageTLS) {
		what += " to " + p.address
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
		req.Header[k] = append([]string(nil), vs...)
	}
	if o.Host != "" {
		req.Host = o.Host
	}
	if _, set := o.Header["User-Agent"]; !set {
		req.Header.Set("User-Agent", o.UserAgent)
	}
	switch {
	case o.HasUser:
		req.SetBasicAuth(o.User, o.Password)
	case o.URL.User != nil:
		pw, _ := o.URL.User.Password()
		req.SetBasicAuth(o.URL.User.Username(), pw)
	}
	return req, nil
}

func (p *run) traceContext(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn: func(string) {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.connTimer != nil {
				p.connTimer.Stop()
			}
			p.connTimer = time.AfterFunc(p.opts.ConnectTimeout, func() { p.closeWindow(p.connWindow) })
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
			if p.connTimer != nil {
				p.connTimer.Stop()
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
				p.startReadWindow()
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
				p.startReadWindow()
			}
			if !p.wrote.IsZero() {
				p.record(PhaseTTFB, p.firstByte.Sub(p.wrote))
			}
		},
	})
}

// startReadWindow starts the read window (p.mu held), once per hop.
func (p *run) startReadWindow() {
	if p.readTimer != nil {
		p.readTimer.Stop()
	}
	p.readTimer = time.AfterFunc(p.opts.ReadTimeout, func() { p.closeWindow(p.readWindow) })
}

func (p *run) transport() *http.Transport {
	o := p.opts
	tr := &http.Transport{
		DialContext:       p.dial,
		TLSClientConfig:   o.TLSConfig.Clone(), // net/http writes NextProtos into it: one per transport
		DisableKeepAlives: true,
		ForceAttemptHTTP2: true,
		// Our own windows bound every phase; the transport's would only
		// make the reasons less precise.
		TLSHandshakeTimeout:    0,
		MaxResponseHeaderBytes: 1 << 20,
	}
	if o.Proxy != nil {
		tr.Proxy = func(r *http.Request) (*url.URL, error) { return o.Proxy(r.URL) }
	}
	return tr
}

// dial resolves and connects, recording the dns and connect phases. It tries
// every address in turn within the connect window, as curl does.
func (p *run) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	o := p.opts
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, ok := o.Resolve[strings.ToLower(host)+":"+port]; ok {
		addrs = []netip.Addr{netip.MustParseAddr(a)}
	} else if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		p.setStage(classify.StageDNS)
		t0 := time.Now()
		addrs, err = p.lookup(ctx, host)
		p.mu.Lock()
		p.record(PhaseDNS, time.Since(t0))
		p.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	addrs = slices.DeleteFunc(addrs, func(a netip.Addr) bool {
		return (o.Network == "tcp4" && family(a) != 4) || (o.Network == "tcp6" && family(a) != 6)
	})
	p.setStage(classify.StageConnect)
	if len(addrs) == 0 {
		return nil, &net.AddrError{Err: "no address of the family asked for (-4/-6)", Addr: host}
	}
	t0 := time.Now()
	d := net.Dialer{KeepAlive: -1}
	var firstErr error
	for _, a := range addrs {
		target := net.JoinHostPort(a.Unmap().String(), port)
		p.mu.Lock()
		p.address = target
		p.family = family(a)
		p.mu.Unlock()
		c, err := d.DialContext(ctx, dialNetwork(a), target)
		if err == nil {
			p.mu.Lock()
			p.record(PhaseConnect, time.Since(t0))
			p.mu.Unlock()
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	p.mu.Lock()
	p.record(PhaseConnect, time.Since(t0))
	p.mu.Unlock()
	return nil, firstErr
}

func family(a netip.Addr) int {
	if a.Unmap().Is4() {
		return 4
	}
	return 6
}

func dialNetwork(a netip.Addr) string {
	if family(a) == 4 {
		return "tcp4"
	}
	return "tcp6"
}

func (p *run) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > p.opts.Follow {
		return http.ErrUseLastResponse
	}
	p.mu.Lock()
	if p.readTimer != nil {
		p.readTimer.Stop()
	}
	p.timings = Timings{}
	p.wrote, p.wroteHeaders, p.firstByte = time.Time{}, time.Time{}, time.Time{}
	p.mu.Unlock()
	if !strings.EqualFold(req.URL.Hostname(), via[0].URL.Hostname()) {
		// Across hosts credentials stay behind (curl's --location without
		// --location-trusted).
		for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie"} {
			req.Header.Del(h)
		}
		for _, h := range p.opts.Redactor.headers {
			req.Header.Del(h)
		}
		req.URL.User = nil
	}
	return nil
}

func (p *run) redirect(base *url.URL, loc string) *Redirect {
	u, err := base.Parse(loc)
	if err != nil {
		return &Redirect{Location: p.opts.Redactor.String(loc)}
	}
	return &Redirect{
		Location:  p.opts.Redactor.URL(u),
		OtherHost: !strings.EqualFold(u.Hostname(), p.opts.URL.Hostname()),
	}
}

// readCapped reads up to max bytes; more is not an error, only truncation.
func readCapped(r io.Reader, max int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if int64(len(b)) > max {
		return b[:max], true, nil
	}
	return b, false, err
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
