// Package probe runs one probe on a fresh connection and records what
// happened: the phases it went through (also when it failed part-way), the
// address it dialled, the TLS chain it was shown, and the raw error with the
// stage it happened in. It never prints and writes no prose: classify names
// the outcome and makes the error sentence from the facts recorded here.
//
// # Protocols
//
// Each protocol is one row of the scheme table (internal/scheme) and one file
// (http.go, net/http's Transport; http1.go, the plain HTTP/1.1 case
// newHTTP picks for an http:// URL with no proxy for it, --follow 0 and no
// HTTP/2, on Request.Write and http.ReadResponse, with the Transport's own
// answers and errors but none of its goroutines; grpc.go, the gRPC health
// call over net/http's HTTP/2; tcp.go, tcp:// and tls://) holding a type
// that implements exchange and its constructor, which exchanges.go names for the row. Run
// picks the exchange by the URL's scheme; everything else is shared through
// the *run it is given:
//   - the dialler, p.dial: --resolve, the DNS client (p.lookup, with
//     --dns-server and the follow-up query that tells NXDOMAIN from
//     NODATA), -4/-6, RFC 8305 racing, the connect window;
//   - the TLS capture, p.tlsConfig: verification after the handshake, so
//     version, cipher and the presented chain are recorded also when
//     verification fails;
//   - the windows (connect, read, max-time: p.arm, p.disarm) and the phase
//     recorder (p.enter, p.record), whose stage names a timeout's phase.
//
// An exchange's run does the I/O and returns the error that ended it; its
// describe fills in what the answer said (status, version, conditions;
// for a row of a kind other than HTTP, the kind's classify.Answer, always,
// read or not) once the timers have stopped. The common finish (finish) records the
// phases, judges a closed window, and asks classify for the outcome,
// reason and sentence.
//
// The exported builders (NewRequest, Dialer, TLSConfig, Transport) give
// other callers (drain-test) the same request, dialler and TLS
// configuration a probe uses.
package probe

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
	"github.com/healthctl/healthctl/internal/resolve"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/tlsinfo"
)

// exchange is one protocol's conversation with the target, over the run's
// shared dialler, TLS capture and windows.
type exchange interface {
	// run talks to the target. ctx ends when a window closes (its cause
	// is the window) or the caller cancels. It returns the error that
	// ended the exchange, nil when the answer was read whole.
	run(ctx context.Context) error
	// answered reports whether the answer's headers had arrived: a window
	// that closes after that closes on the body.
	answered() bool
	// describe fills in what the answer said, with p.mu held and the
	// timers stopped; err is the probe's final error.
	describe(err error, now time.Time, res *Result, obs *classify.Observation, f *classify.Facts)
	// close releases what the exchange holds (idle connections, dials
	// still running), once the result is made.
	close()
}

// Run probes once. It returns within opts.MaxTime (plus scheduling noise)
// whatever the server does; ctx cancellation (Ctrl-C) ends it early with
// Result.Canceled set.
func Run(ctx context.Context, opts *scheme.Options) Result {
	if opts.AllAddresses {
		return runAll(ctx, opts)
	}
	return newRun(opts, hooks{}).do(ctx)
}

// hooks are test seams: each runs (when set) at a moment a test must reach
// from inside a probe. Only tests in this package set them, through
// newRun; Run passes none.
type hooks struct {
	// afterHeaders runs between the response headers returned and the
	// body stage entered: a window that closes there closes on the body.
	afterHeaders func(*run)
	// afterBody runs between the body read and the timers stopping: the
	// moment a late window must not count.
	afterBody func(*run)
	// transport sends an HTTP probe through net/http's Transport even
	// when the HTTP/1.1 exchange would take it (the cross-path test).
	transport bool
	// afterExchange runs between the exchange's return and the result's
	// making: where a signal can land once the answer is in.
	afterExchange func()
	// starvedTimer keeps the windows' timer from ever firing, as a timer
	// goroutine starved of CPU fails to: the connection's backstop
	// deadlines are all that is left.
	starvedTimer bool
}

// run is the state of one probe. The trace hooks, timers and dial attempts
// run on other goroutines, so every part below mu is guarded by it.
type run struct {
	opts  *scheme.Options
	start time.Time
	hooks hooks
	// ctx is the probe's context (set by do).
	ctx deadlined

	mu sync.Mutex
	recorder
	windows
	dialState
	hop

	// result, and the observation and facts finish judges it from, are
	// parts of the run, not allocations of their own (the exchange's
	// describe takes pointers to them): a sweep makes one run a target.
	result Result
	obs    classify.Observation
	facts  classify.Facts

	// bodyHanded counts the current request body's bytes handed to the
	// connection (countBody; each body has a counter of its own, so one
	// the Transport still reads after GetBody gave the next does not
	// count), and wb is the hop's connection when it carries a body:
	// bodyUnsent tells from them whether the server stopped reading it.
	// Both under mu.
	bodyHanded *atomic.Int64
	wb         *writeBehind
}

// recorder is the phase recorder: the stage running, the phases done, and
// the moments the request went out and the answer began.
type recorder struct {
	stage   classify.Stage
	timings Timings
	// stageStart is when the running stage began, for the partial
	// duration of a phase that a window or an error cut short.
	stageStart time.Time
	finished   bool
	tlsState   *tls.ConnectionState
	// ocsp is what the last handshake's stapled OCSP response said (nil: none).
	ocsp *tlsinfo.OCSP
	// An https:// proxy's own handshake: inProxyTLS while it runs (the
	// trace hooks and the verification tell it from the target's),
	// proxyTLSStarted once it began, proxyTLSOK once it verified;
	// proxyTLSState is its state.
	inProxyTLS, proxyTLSStarted, proxyTLSOK bool
	proxyTLSState                           *tls.ConnectionState
	wrote                                   time.Time
	// wroteHeaders is when the request headers went out.
	wroteHeaders time.Time
	// connReady is when the connection was handed to the request
	// (GotConn): the start of ttfb when no write was reported.
	connReady time.Time
	firstByte time.Time
}

// hop is the hop being requested: its URL, whether it goes through a proxy
// (and which), and the name its certificate must carry.
type hop struct {
	hopURL   *url.URL
	proxied  bool
	proxyURL *url.URL
	// forward is a plain-HTTP request through an HTTP proxy: no tunnel,
	// the proxy answers for the server. Otherwise (CONNECT, SOCKS5) what
	// follows the tunnel is the server's.
	forward    bool
	serverName string
	// proxyStatus is the status line a proxy answered the CONNECT with,
	// when it was not 200; proxyHeader is that answer's header.
	proxyStatus     int
	proxyStatusLine string
	proxyHeader     http.Header
	// certAsked: the server asked for a client certificate (at the
	// handshake or by renegotiation).
	certAsked bool
	// tlsUnverified, when set, names why the exchange did not verify the
	// chain it was shown (postgres' sslmode=require, as libpq's).
	tlsUnverified string
}

// newRun prepares one probe of opts; h are test seams (none in Run).
func newRun(opts *scheme.Options, h hooks) *run {
	// One allocation for the run and what it owns (the resolver, the
	// dial condition, the windows' causes): a sweep makes one a target.
	p := &run{opts: opts, start: time.Now(), hooks: h}
	p.dns = resolve.Client{Server: opts.DNSServer, Network: opts.Network}
	p.conns = p.connsBuf[:0]
	p.attempts = p.attemptsBuf[:0]
	p.dialIdle.L = &p.mu
	p.connWin.cause = windowError{"--connect-timeout", opts.ConnectTimeout}
	p.readWin.cause = windowError{"--read-timeout", opts.ReadTimeout}
	p.maxWin.cause = windowError{"--max-time", opts.MaxTime}
	return p
}

// setStage enters a stage; its phase's clock starts now.
func (p *run) setStage(s classify.Stage) {
	p.mu.Lock()
	p.enter(s)
	p.mu.Unlock()
}

// enter is setStage with p.mu held.
func (p *run) enter(s classify.Stage) {
	p.enterAt(s, time.Now())
}

// enterAt is enter at the moment now.
func (p *run) enterAt(s classify.Stage, now time.Time) {
	p.stage = s
	p.stageStart = now
}

// record sets a phase's duration with p.mu held, unless the probe has
// already returned.
func (p *run) record(ph Phase, d time.Duration) {
	if !p.finished {
		p.timings.Set(ph, d)
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

// headersArrived records ttfb when the answer's headers are here and no
// hook has (the first-byte hook raced the request-written ones, as HTTP/2's
// can, or never fired): from the request's start to the first byte, else
// to now.
func (p *run) headersArrived() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timings.Has(PhaseTTFB) {
		return
	}
	if start := p.requestStart(); !start.IsZero() {
		end := p.firstByte
		if end.IsZero() {
			end = time.Now()
		}
		p.record(PhaseTTFB, end.Sub(start))
	}
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
	// A CONNECT (or SOCKS5 handshake) cut short is the proxy phase;
	// closeTimings leaves a forward proxy's wait to ttfb.
	classify.StageProxy: PhaseProxy,
}

func (p *run) do(parent context.Context) Result {
	o := p.opts
	// The windows' timer cancels the context when --max-time closes,
	// noting the stage that was running. The context also reports a
	// deadline a moment after it (deadlined: no timer of its own), which
	// the dialler's connects and lookups take as their own deadlines.
	cctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	p.cancel = cancel
	p.ctx = newDeadlined(cctx, p.start.Add(o.MaxTime+maxTimeBackstop))
	var ctx context.Context = &p.ctx
	// Whatever ends the context (a window, Ctrl-C) closes the probe's
	// connections: the exchange's reads and writes end then, whatever the
	// server does. A window closes them itself (end); the caller's
	// cancellation through the worker's closer (WithCloser), else through
	// a registration of the probe's own.
	if c := closerFor(parent, p); c != nil {
		p.closer = c
		defer c.release(p)
	} else {
		stopClosing := context.AfterFunc(ctx, p.closeConns)
		defer stopClosing()
	}
	p.mu.Lock()
	// --max-time runs from the probe's start.
	p.enterAt(p.firstStage(o.URL, false), p.start)
	p.armAt(&p.maxWin, p.start, p.start.Add(o.MaxTime))
	p.mu.Unlock()
	defer p.stopTimers()

	res := &p.result
	*res = Result{URL: o.DisplayURL(), Started: p.start}
	newExchange := exchangeFor(o.URL.Scheme)
	var ex exchange
	var err error
	if newExchange != nil {
		ex, err = newExchange(ctx, p)
	} else {
		err = fmt.Errorf("unsupported scheme %q", o.URL.Scheme)
	}
	if err != nil {
		// Options are validated before a probe runs; this is a bug guard.
		res.Outcome, res.Reason = classify.Unreachable, classify.ProtocolError
		res.Error = o.Redactor.String(err.Error())
		return *res
	}
	defer ex.close()
	err = ex.run(ctx)
	if p.hooks.afterExchange != nil {
		p.hooks.afterExchange()
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
func (p *run) finish(parent, ctx context.Context, ex exchange, err error, res *Result) {
	o := p.opts
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
	p.closeTimings(now)
	// From now on nothing writes the phases (record checks finished): the
	// result takes the map.
	res.Timings = p.timings
	res.Address = p.address
	res.IPFamily = p.family
	if p.proxied {
		res.Proxy = o.Redactor.URL(p.proxyURL)
	}

	obs := &p.obs
	*obs = classify.Observation{Stage: p.stage, Proxied: p.proxied, DNS: p.dnsAnswer, Now: now,
		ClientCertAsked: p.certAsked, ClientCertGiven: clientCertGiven(p.opts)}
	if p.proxyStatus != 0 {
		obs.ProxyStatus = p.proxyStatus
	}
	f := &p.facts
	*f = classify.Facts{Host: o.URL.Hostname(), Proxy: res.Proxy, FirstByte: !p.firstByte.IsZero()}
	row, _ := scheme.LookupScheme(o.URL.Scheme)
	if !row.TLS && row.Options&scheme.AppliesRequest != 0 {
		f.PlainHTTP = true
	}
	// The row's kind judges its answer: never HTTP's rules for another
	// protocol, even when its exchange left no answer.
	obs.Kind = row.Kind
	if p.hopURL != nil {
		f.Host = p.hopURL.Hostname()
	}
	f.ProxySOCKS = p.proxyURL != nil && strings.HasPrefix(p.proxyURL.Scheme, "socks")
	if p.proxyStatus != 0 {
		f.ProxyStatus = p.proxyStatusLine
		f.ProxyDetail = o.Redactor.String(proxyDetail(p.proxyHeader))
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
		err = p.windowed(err, context.Cause(ctx), ex.answered(), obs, f, res)
	}
	ex.describe(err, now, res, obs, f)
	res.Answer = obs.Answer
	proxyTLSFailed := p.proxyTLSStarted && !p.proxyTLSOK
	obs.ProxyTLSFailed = proxyTLSFailed
	if p.proxyTLSStarted {
		// The proxy's own handshake: its chain and errors are the
		// proxy's, never shown as the target's.
		var perr error
		if proxyTLSFailed {
			perr = exchangeErr
		}
		res.ProxyTLS = tlsinfo.Describe(p.proxyTLSState, perr, now)
		if pt := p.opts.ProxyTLSConfig; res.ProxyTLS != nil && pt != nil && pt.InsecureSkipVerify {
			res.ProxyTLS.VerificationOff("--proxy-insecure")
		}
	}
	if !proxyTLSFailed {
		res.TLS = tlsinfo.Describe(p.tlsState, exchangeErr, now)
	}
	if res.TLS != nil {
		res.TLS.OCSP = p.ocsp
	}
	if tc := p.opts.TLSConfig; tc != nil && tc.InsecureSkipVerify && res.TLS != nil {
		res.TLS.VerificationOff(p.opts.InsecureWhy)
	} else if p.tlsUnverified != "" {
		res.TLS.VerificationOff(p.tlsUnverified)
	}
	if len(p.attempts) > 1 {
		res.DialAttempts = append([]DialAttempt(nil), p.attempts...)
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

// closeTimings records the phase cut short and the total (p.mu held); from
// now on late hooks write nothing.
func (p *run) closeTimings(now time.Time) {
	p.finished = true
	if ph, ok := stagePhase[p.stage]; ok && !p.stageStart.IsZero() && (p.stage != classify.StageProxy || !p.forward) {
		if !p.timings.Has(ph) {
			p.timings.Set(ph, now.Sub(p.stageStart))
		}
	}
	st := p.stage
	if p.windowStage != "" {
		st = p.windowStage
	}
	if st == classify.StageHeaders || st == classify.StageWrite || (st == classify.StageProxy && p.forward) {
		// Waiting for headers that never came: the wait is the ttfb
		// phase, cut short, so the waterfall shows it.
		if !p.timings.Has(PhaseTTFB) {
			if start := p.requestStart(); !start.IsZero() {
				p.timings.Set(PhaseTTFB, now.Sub(start))
			}
		}
		if !p.firstByte.IsZero() && !p.timings.Has(PhaseTransfer) {
			// The first byte came and the headers never finished: the
			// rest of the wait is the transfer of the headers.
			p.timings.Set(PhaseTransfer, now.Sub(p.firstByte))
		}
	}
	p.timings.Set(PhaseTotal, now.Sub(p.start))
}

// firstStage is the stage a connection to u starts in (p.mu held): DNS when
// its host must be looked up, otherwise connect.
func (p *run) firstStage(u *url.URL, proxied bool) classify.Stage {
	if proxied || u == nil {
		return classify.StageConnect
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = scheme.DefaultPort(u.Scheme)
	}
	if isFixed(p.opts, host, port) {
		return classify.StageConnect
	}
	return classify.StageDNS
}
