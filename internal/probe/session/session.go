// Package session is the shared machinery of one probe: the run's state
// (Probe), its phase recorder and windows, the dialler, the DNS client,
// the TLS capture and the result. Each exchange (internal/probe's
// subpackages) talks to the target through a *Probe; internal/probe's Run
// is the front door that picks the exchange of a URL's row.
package session

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/writebehind"
	"github.com/healthctl/healthctl/internal/resolve"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/tlsinfo"
)

// Exchange is one protocol's conversation with the target, over the run's
// shared dialler, TLS capture and windows.
type Exchange interface {
	// Run talks to the target. ctx ends when a window closes (its cause
	// is the window) or the caller cancels. It returns the error that
	// ended the exchange, nil when the answer was read whole.
	Run(ctx context.Context) error
	// Answered reports whether the answer's headers had arrived: a window
	// that closes after that closes on the body.
	Answered() bool
	// Describe fills in what the answer said, with p.Mu held and the
	// timers stopped; err is the probe's final error.
	Describe(err error, now time.Time, res *result.Result, obs *classify.Observation, f *classify.Facts)
	// Close releases what the exchange holds (idle connections, dials
	// still running), once the result is made.
	Close()
}

// Hooks are test seams: each runs (when set) at a moment a test must reach
// from inside a probe. Only tests set them, through New; probe.Run passes
// none.
type Hooks struct {
	// AfterHeaders runs between the response headers returned and the
	// body stage entered: a window that closes there closes on the body.
	AfterHeaders func(*Probe)
	// AfterBody runs between the body read and the timers stopping: the
	// moment a late window must not count.
	AfterBody func(*Probe)
	// Transport sends an HTTP probe through net/http's Transport even
	// when the HTTP/1.1 exchange would take it (the cross-path test).
	Transport bool
	// AfterExchange runs between the exchange's return and the result's
	// making: where a signal can land once the answer is in.
	AfterExchange func()
	// StarvedTimer keeps the windows' timer from ever firing, as a timer
	// goroutine starved of CPU fails to: the connection's backstop
	// deadlines are all that is left.
	StarvedTimer bool
}

// Probe is the state of one probe. The trace hooks, timers and dial attempts
// run on other goroutines, so every part below mu is guarded by it.
type Probe struct {
	Opts  *scheme.Options
	Start time.Time
	Hooks Hooks
	// Ctx is the probe's context (set by do).
	Ctx Deadlined

	Mu sync.Mutex
	recorder
	windows
	dialState
	hop

	// result, and the observation and facts finish judges it from, are
	// parts of the run, not allocations of their own (the exchange's
	// describe takes pointers to them): a sweep makes one run a target.
	result result.Result
	obs    classify.Observation
	facts  classify.Facts

	// BodyHanded counts the current request body's bytes handed to the
	// connection (countBody; each body has a counter of its own, so one
	// the Transport still reads after GetBody gave the next does not
	// count), and wb is the hop's connection when it carries a body:
	// bodyUnsent tells from them whether the server stopped reading it.
	// Both under mu.
	BodyHanded *atomic.Int64
	Wb         *writebehind.Conn
}

// recorder is the phase recorder: the stage running, the phases done, and
// the moments the request went out and the answer began.
type recorder struct {
	Stage   classify.Stage
	Timings result.Timings
	// StageStart is when the running stage began, for the partial
	// duration of a phase that a window or an error cut short.
	StageStart time.Time
	finished   bool
	TLSState   *tls.ConnectionState
	// OCSP is what the last handshake's stapled OCSP response said (nil: none).
	OCSP *tlsinfo.OCSP
	// An https:// proxy's own handshake: inProxyTLS while it runs (the
	// trace hooks and the verification tell it from the target's),
	// proxyTLSStarted once it began, proxyTLSOK once it verified;
	// proxyTLSState is its state.
	InProxyTLS, ProxyTLSStarted, ProxyTLSOK bool
	ProxyTLSState                           *tls.ConnectionState
	Wrote                                   time.Time
	// WroteHeaders is when the request headers went out.
	WroteHeaders time.Time
	// ConnReady is when the connection was handed to the request
	// (GotConn): the start of ttfb when no write was reported.
	ConnReady time.Time
	FirstByte time.Time
}

// hop is the hop being requested: its URL, whether it goes through a proxy
// (and which), and the name its certificate must carry.
type hop struct {
	HopURL   *url.URL
	Proxied  bool
	ProxyURL *url.URL
	// Forward is a plain-HTTP request through an HTTP proxy: no tunnel,
	// the proxy answers for the server. Otherwise (CONNECT, SOCKS5) what
	// follows the tunnel is the server's.
	Forward    bool
	ServerName string
	// ProxyStatus is the status line a proxy answered the CONNECT with,
	// when it was not 200; proxyHeader is that answer's header.
	ProxyStatus     int
	ProxyStatusLine string
	ProxyHeader     http.Header
	// CertAsked: the server asked for a client certificate (at the
	// handshake or by renegotiation).
	CertAsked bool
	// TLSUnverified, when set, names why the exchange did not verify the
	// chain it was shown (postgres' sslmode=require, as libpq's).
	TLSUnverified string
}

// New prepares one probe of opts; h are test seams (none in probe.Run).
func New(opts *scheme.Options, h Hooks) *Probe {
	// One allocation for the run and what it owns (the resolver, the
	// dial condition, the windows' causes): a sweep makes one a target.
	p := &Probe{Opts: opts, Start: time.Now(), Hooks: h}
	p.DNS = resolve.Client{Server: opts.DNSServer, Network: opts.Network}
	p.conns = p.connsBuf[:0]
	p.Attempts = p.attemptsBuf[:0]
	p.dialIdle.L = &p.Mu
	p.ConnWin.Cause = WindowError{"--connect-timeout", opts.ConnectTimeout}
	p.ReadWin.Cause = WindowError{"--read-timeout", opts.ReadTimeout}
	p.MaxWin.Cause = WindowError{"--max-time", opts.MaxTime}
	return p
}

// SetStage enters a stage; its phase's clock starts now.
func (p *Probe) SetStage(s classify.Stage) {
	p.Mu.Lock()
	p.Enter(s)
	p.Mu.Unlock()
}

// Enter is SetStage with p.Mu held.
func (p *Probe) Enter(s classify.Stage) {
	p.EnterAt(s, time.Now())
}

// EnterAt is enter at the moment now.
func (p *Probe) EnterAt(s classify.Stage, now time.Time) {
	p.Stage = s
	p.StageStart = now
}

// Record sets a phase's duration with p.Mu held, unless the probe has
// already returned.
func (p *Probe) Record(ph result.Phase, d time.Duration) {
	if !p.finished {
		p.Timings.Set(ph, d)
	}
}

// RequestStart is when the request went out, as well as it is known (p.Mu
// held): written, else its headers written, else the connection ready.
func (p *Probe) RequestStart() time.Time {
	switch {
	case !p.Wrote.IsZero():
		return p.Wrote
	case !p.WroteHeaders.IsZero():
		return p.WroteHeaders
	}
	return p.ConnReady
}

// HeadersArrived records ttfb when the answer's headers are here and no
// hook has (the first-byte hook raced the request-written ones, as HTTP/2's
// can, or never fired): from the request's start to the first byte, else
// to now.
func (p *Probe) HeadersArrived() {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if p.Timings.Has(result.PhaseTTFB) {
		return
	}
	if start := p.RequestStart(); !start.IsZero() {
		end := p.FirstByte
		if end.IsZero() {
			end = time.Now()
		}
		p.Record(result.PhaseTTFB, end.Sub(start))
	}
}

// LeaveProxy records the proxy phase when the tunnel through a proxy is up
// (p.Mu held).
func (p *Probe) LeaveProxy() {
	if p.Stage == classify.StageProxy && !p.Forward {
		p.Record(result.PhaseProxy, time.Since(p.StageStart))
	}
}

// stagePhase is the waterfall phase a stage's time belongs to (a switch,
// not a map literal, which would be built at every start).
func stagePhase(s classify.Stage) (result.Phase, bool) {
	switch s {
	case classify.StageDNS:
		return result.PhaseDNS, true
	case classify.StageConnect:
		return result.PhaseConnect, true
	case classify.StageTLS:
		return result.PhaseTLS, true
	case classify.StageProxy:
		// A CONNECT (or SOCKS5 handshake) cut short is the proxy phase;
		// closeTimings leaves a forward proxy's wait to ttfb.
		return result.PhaseProxy, true
	}
	return "", false
}

// Do runs the probe: open makes its exchange (nil: a scheme no row
// speaks, a bug guard), which talks to the target in the probe's windows;
// the result is made once it has returned.
func (p *Probe) Do(parent context.Context, open func(ctx context.Context, p *Probe) (Exchange, error)) result.Result {
	o := p.Opts
	// The windows' timer cancels the context when --max-time closes,
	// noting the stage that was running. The context also reports a
	// deadline a moment after it (deadlined: no timer of its own), which
	// the dialler's connects and lookups take as their own deadlines.
	cctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	p.Cancel = cancel
	p.Ctx = NewDeadlined(cctx, p.Start.Add(o.MaxTime+MaxTimeBackstop))
	var ctx context.Context = &p.Ctx
	// Whatever ends the context (a window, Ctrl-C) closes the probe's
	// connections: the exchange's reads and writes end then, whatever the
	// server does. A window closes them itself (end); the caller's
	// cancellation through the worker's closer (WithCloser), else through
	// a registration of the probe's own.
	if c := closerFor(parent, p); c != nil {
		p.Closer = c
		defer c.release(p)
	} else {
		stopClosing := context.AfterFunc(ctx, p.closeConns)
		defer stopClosing()
	}
	p.Mu.Lock()
	// --max-time runs from the probe's start.
	p.EnterAt(p.FirstStage(o.URL, false), p.Start)
	p.ArmAt(&p.MaxWin, p.Start, p.Start.Add(o.MaxTime))
	p.Mu.Unlock()
	defer p.stopTimers()

	res := &p.result
	*res = result.Result{URL: o.DisplayURL(), Started: p.Start}
	var ex Exchange
	var err error
	if open != nil {
		ex, err = open(ctx, p)
	} else {
		err = fmt.Errorf("unsupported scheme %q", o.URL.Scheme)
	}
	if err != nil {
		// Options are validated before a probe runs; this is a bug guard.
		res.Outcome, res.Reason = classify.Unreachable, classify.ProtocolError
		res.Error = o.Redactor.String(err.Error())
		return *res
	}
	defer ex.Close()
	err = ex.Run(ctx)
	if p.Hooks.AfterExchange != nil {
		p.Hooks.AfterExchange()
	}
	// Every timer stops before anything is judged: a window that closes
	// after the last byte was read must not turn a finished probe into a
	// timeout.
	p.stopTimers()
	p.finish(parent, ctx, ex, err, res)
	return *res
}

// finish makes the result once the exchange has returned: the phases cut
// short, a window that closed, the TLS chain, the dial attempts, and the
// outcome, reason and sentence.
func (p *Probe) finish(parent, ctx context.Context, ex Exchange, err error, res *result.Result) {
	o := p.Opts
	now := time.Now()
	p.Mu.Lock()
	defer p.Mu.Unlock()
	// The transport returns as soon as the context ends, while its dial
	// may still be running: wait for it (a cancelled dial ends at once),
	// so its attempts and their answers are known.
	if err != nil && ctx.Err() != nil {
		for p.dialing > 0 {
			p.dialIdle.Wait()
		}
	}
	p.closeTimings(now)
	// From now on nothing writes the phases (record checks finished): the
	// result takes the map.
	res.Timings = p.Timings
	res.Address = p.Address
	res.IPFamily = p.Family
	if p.Proxied {
		res.Proxy = o.Redactor.URL(p.ProxyURL)
	}

	obs := &p.obs
	*obs = classify.Observation{Stage: p.Stage, Proxied: p.Proxied, DNS: p.dnsAnswer, Now: now,
		ClientCertAsked: p.CertAsked, ClientCertGiven: ClientCertGiven(p.Opts)}
	if p.ProxyStatus != 0 {
		obs.ProxyStatus = p.ProxyStatus
	}
	f := &p.facts
	*f = classify.Facts{Host: o.URL.Hostname(), Proxy: res.Proxy, FirstByte: !p.FirstByte.IsZero()}
	row, _ := scheme.LookupScheme(o.URL.Scheme)
	if !row.TLS && row.Options&scheme.AppliesRequest != 0 {
		f.PlainHTTP = true
	}
	// The row's kind judges its answer: never HTTP's rules for another
	// protocol, even when its exchange left no answer.
	obs.Kind = row.Kind
	if p.HopURL != nil {
		f.Host = p.HopURL.Hostname()
	}
	f.ProxySOCKS = p.ProxyURL != nil && strings.HasPrefix(p.ProxyURL.Scheme, "socks")
	if p.ProxyStatus != 0 {
		f.ProxyStatus = p.ProxyStatusLine
		f.ProxyDetail = o.Redactor.String(ProxyDetail(p.ProxyHeader))
	}
	// The chain a failed verification presented is in the exchange's
	// own error, whatever ended the probe.
	exchangeErr := err
	if err != nil && parent.Err() != nil {
		// Only an exchange that did not finish was cut short: one whose
		// answer was read and judged before the signal came is a result
		// like any other (the HTTP/1.1 exchange closes its connection as
		// soon as the answer is read, before the result is made).
		res.Canceled = true
		err = parent.Err()
	} else {
		err = p.windowed(err, context.Cause(ctx), ex.Answered(), obs, f, res)
	}
	ex.Describe(err, now, res, obs, f)
	res.Answer = obs.Answer
	proxyTLSFailed := p.ProxyTLSStarted && !p.ProxyTLSOK
	obs.ProxyTLSFailed = proxyTLSFailed
	if p.ProxyTLSStarted {
		// The proxy's own handshake: its chain and errors are the
		// proxy's, never shown as the target's.
		var perr error
		if proxyTLSFailed {
			perr = exchangeErr
		}
		res.ProxyTLS = tlsinfo.Describe(p.ProxyTLSState, perr, now)
		if pt := p.Opts.ProxyTLSConfig; res.ProxyTLS != nil && pt != nil && pt.InsecureSkipVerify {
			res.ProxyTLS.VerificationOff("--proxy-insecure")
		}
	}
	if !proxyTLSFailed {
		res.TLS = tlsinfo.Describe(p.TLSState, exchangeErr, now)
	}
	if res.TLS != nil {
		res.TLS.OCSP = p.OCSP
	}
	if tc := p.Opts.TLSConfig; tc != nil && tc.InsecureSkipVerify && res.TLS != nil {
		res.TLS.VerificationOff(p.Opts.InsecureWhy)
	} else if p.TLSUnverified != "" {
		res.TLS.VerificationOff(p.TLSUnverified)
	}
	if len(p.Attempts) > 1 {
		res.DialAttempts = append([]result.DialAttempt(nil), p.Attempts...)
		for i := range res.DialAttempts {
			res.DialAttempts[i].Error = o.Redactor.String(res.DialAttempts[i].Error)
		}
	}
	obs.Err = err
	res.Outcome, res.Reason = classify.Classify(*obs)
	if err != nil || obs.Answer != nil || res.Reason != classify.OK {
		// A pass of no kind's answer has no sentence to redact: the
		// method value is an allocation a probe, made only when a
		// sentence may quote a secret.
		f.Redact = o.Redactor.String
	}
	res.Error = classify.Sentence(*obs, res.Reason, *f)
}

// closeTimings records the phase cut short and the total (p.Mu held); from
// now on late hooks write nothing.
func (p *Probe) closeTimings(now time.Time) {
	p.finished = true
	if ph, ok := stagePhase(p.Stage); ok && !p.StageStart.IsZero() && (p.Stage != classify.StageProxy || !p.Forward) {
		if !p.Timings.Has(ph) {
			p.Timings.Set(ph, now.Sub(p.StageStart))
		}
	}
	st := p.Stage
	if p.windowStage != "" {
		st = p.windowStage
	}
	if st == classify.StageHeaders || st == classify.StageWrite || (st == classify.StageProxy && p.Forward) {
		// Waiting for headers that never came: the wait is the ttfb
		// phase, cut short, so the waterfall shows it.
		if !p.Timings.Has(result.PhaseTTFB) {
			if start := p.RequestStart(); !start.IsZero() {
				p.Timings.Set(result.PhaseTTFB, now.Sub(start))
			}
		}
		if !p.FirstByte.IsZero() && !p.Timings.Has(result.PhaseTransfer) {
			// The first byte came and the headers never finished: the
			// rest of the wait is the transfer of the headers.
			p.Timings.Set(result.PhaseTransfer, now.Sub(p.FirstByte))
		}
	}
	p.Timings.Set(result.PhaseTotal, now.Sub(p.Start))
}

// FirstStage is the stage a connection to u starts in (p.Mu held): DNS when
// its host must be looked up, otherwise connect.
func (p *Probe) FirstStage(u *url.URL, proxied bool) classify.Stage {
	if proxied || u == nil {
		return classify.StageConnect
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = scheme.DefaultPort(u.Scheme)
	}
	if IsFixed(p.Opts, host, port) {
		return classify.StageConnect
	}
	return classify.StageDNS
}
