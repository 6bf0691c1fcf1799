package drain

// The traffic side of drain-test: the health polls, the traffic requests
// and the in-flight requests (the kept-alive connection is keepalive.go's),
// all built from probe's request builder, each recorded for the request
// log.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/drain/service"
	"github.com/healthctl/healthctl/internal/probe/httpprobe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// TrafficWindow bounds one traffic request by default, its connection and
// its whole body included: min(S, 5 s) (at least a poll's 1 s). The
// traffic endpoint defaults to the slow --inflight URL, so a slow answer
// is not a failure; one that takes longer than the window is (judged by
// when the request was made). --traffic-timeout replaces it.
func TrafficWindow(s time.Duration) time.Duration { return max(pollTimeout, min(s, 5*time.Second)) }

// trafficWindow is the run's traffic window: --traffic-timeout, else
// TrafficWindow(S).
func (cfg Config) trafficWindow() time.Duration {
	if cfg.TrafficTimeout > 0 {
		return cfg.TrafficTimeout
	}
	return TrafficWindow(cfg.Settings.ShutdownTimeout)
}

// inflight are the slow requests in flight at the signal.
type inflight struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	got    []timedRequest
	// started is how many were started.
	started int
	// baseline is the length of the --inflight URL's whole answer before
	// the signal (-1: none was read), the yardstick of a close-delimited
	// in-flight body.
	baseline int64
}

// inflightSettle is how long the in-flight requests have been written
// when the signal is sent.
const inflightSettle = 150 * time.Millisecond

// startInflight starts cfg.Inflight slow requests on cfg.InflightURL (none
// without one) and returns once each has been written, or after 2s.
func startInflight(cfg Config, opts *scheme.Options) *inflight {
	ctx, cancel := context.WithCancel(context.Background())
	in := &inflight{cancel: cancel, baseline: -1}
	if opts == nil {
		return in
	}
	wrote := make(chan struct{}, cfg.Inflight)
	window := cfg.Settings.ShutdownTimeout + service.KillMargin(cfg.Settings.ShutdownTimeout) + 2*time.Second
	ic := &http.Client{Transport: httpprobe.Transport(withTimeout(opts, pollTimeout)),
		Timeout:       window,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if !IsGRPC(opts.URL) {
		// The same URL's whole answer, before anything is in flight: a
		// body without a length ends when the server closes the
		// connection (RFC 9112 §6.3), complete unless shorter than this.
		// Bounded as a traffic request is: a URL that never answers
		// leaves no baseline, and the run goes on.
		bc := *ic
		bc.Timeout = cfg.trafficWindow()
		b := slowRequest(ctx, &bc, opts, make(chan struct{}, 1))
		if b.OK() {
			in.baseline = b.Bytes
		}
	}
	in.started = cfg.Inflight
	for i := 0; i < cfg.Inflight; i++ {
		in.wg.Add(1)
		crash.Go(func() {
			defer in.wg.Done()
			var r timedRequest
			if IsGRPC(opts.URL) {
				r = grpcCall(ctx, opts, cfg.InflightBody, window, wrote)
			} else {
				r = slowRequest(ctx, ic, opts, wrote)
			}
			in.mu.Lock()
			in.got = append(in.got, r)
			in.mu.Unlock()
		})
	}
	timeout := time.NewTimer(2 * time.Second)
	for n := 0; n < cfg.Inflight; n++ {
		select {
		case <-wrote:
		case <-timeout.C:
			n = cfg.Inflight
		}
	}
	timeout.Stop()
	return in
}

// settle gives the server time to read the in-flight requests written and
// start handling them: a request still unread at the signal is one a
// server closing its idle connections drops (Node's server.close() resets
// it), which says nothing about its drain. At least inflightSettle; and
// until barrier — a readiness poll on a fresh connection, made after every
// in-flight request was written, bounded by the poll's own window — has
// its answer: an event-loop server answers it only once it has read what
// came before it, which a fixed wait alone did not prove on a loaded
// machine (CI: Node, 150 ms after the writes, had not read them and reset
// both).
func (in *inflight) settle(barrier func()) {
	if in.started == 0 {
		return
	}
	until := time.Now().Add(inflightSettle)
	if barrier != nil {
		barrier()
	}
	time.Sleep(time.Until(until))
}

// watcher polls readiness and liveness every Interval, and watches the
// kept-alive connection, from the signal until cancel.
type watcher struct {
	// stop ends the polling: no new request is made, those out run to
	// their own windows; cancel ends those too (drain-test interrupted).
	stop   context.CancelFunc
	cancel context.CancelFunc
	// stopTraffic ends the traffic loop (at P on its own).
	stopTraffic context.CancelFunc
	// late is the worst lateness of drain-test's own timer and pollers.
	late       timedLateness
	wg         sync.WaitGroup
	mu         sync.Mutex
	polls      []timedPoll
	ka         []timedKA
	kaRequests int
}

func startWatch(ep endpoints, cfg Config, ka *keepAlive, t0 time.Time) *watcher {
	// Not the run's context (the watch outlives an interrupt by a moment),
	// but its prober: the polls after the signal go through it too.
	ctx, cancel := context.WithCancel(withProber(context.Background(), cfg.Prober))
	loop, stop := context.WithCancel(ctx)
	w := &watcher{cancel: cancel, stop: stop}
	type pollSpec struct {
		probe    evidence.Probe
		interval time.Duration
		window   time.Duration
	}
	specs := []pollSpec{{evidence.Ready, Interval, pollTimeout}, {evidence.Live, Interval, pollTimeout}}
	if ep[evidence.Traffic] != nil {
		every := TrafficInterval
		if cfg.TrafficURL == cfg.InflightURL {
			// The slow in-flight path by default: 10 a second, not 50,
			// or the traffic itself would load the service down.
			every = SlowTrafficInterval
		}
		specs = append(specs, pollSpec{evidence.Traffic, every, cfg.trafficWindow()})
	}
	for _, p := range specs {
		until := loop
		if p.probe == evidence.Traffic {
			// Traffic exists to check the pre-drain: no new request
			// after P, so drain-test's own load never keeps a service
			// alive (one that exits once nothing is in flight). Those
			// made in P run to their answers.
			var done context.CancelFunc
			until, done = context.WithDeadline(loop, t0.Add(cfg.Settings.PreDrain))
			w.stopTraffic = done
		}
		w.wg.Add(1)
		crash.Go(func() {
			defer w.wg.Done()
			w.pollEvery(until, ctx, ep[p.probe], p.probe, p.interval, p.window)
		})
	}
	if ka.conn != nil {
		w.wg.Add(1)
		crash.Go(func() {
			defer w.wg.Done()
			w.ka, w.kaRequests = ka.watch(loop)
		})
	}
	w.wg.Add(1)
	crash.Go(func() {
		defer w.wg.Done()
		w.timeOwnLateness(loop)
	})
	return w
}

// latenessTick is the period of drain-test's own lateness timer.
const latenessTick = 10 * time.Millisecond

// timedLateness is the worst lateness seen, and when and of what.
type timedLateness struct {
	mu   sync.Mutex
	max  time.Duration
	at   time.Time
	what string
}

func (l *timedLateness) note(what string, late time.Duration, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if late > l.max {
		l.max, l.at, l.what = late, at, what
	}
}

// timeOwnLateness measures how late a 10 ms timer fires, until loop
// ends: on a starved machine (a loaded CI runner) it is what says a poll
// that timed out may be drain-test's own fault.
func (w *watcher) timeOwnLateness(loop context.Context) {
	t := time.NewTimer(latenessTick)
	defer t.Stop()
	for {
		start := time.Now()
		t.Reset(latenessTick)
		select {
		case <-loop.Done():
			return
		case now := <-t.C:
			w.late.note("its 10 ms timer", now.Sub(start)-latenessTick, now)
		}
	}
}

// pollEvery makes a new poll every interval, start to start, each on its
// own goroutine (a poll that hangs for its whole window does not delay the
// next: a stall is seen when it begins), until loop ends; it returns once
// the polls out have ended, each within window (a traffic request made in
// the pre-drain to a slow path is answered after the watch stopped making
// new ones, or cut by the service: its outcome is the service's, not the
// end of the watch's). ctx ending cuts them (drain-test interrupted): those
// are not recorded.
func (w *watcher) pollEvery(loop, ctx context.Context, opts *scheme.Options, which evidence.Probe, interval, window time.Duration) {
	var polls sync.WaitGroup
	defer polls.Wait()
	t := time.NewTicker(interval)
	defer t.Stop()
	prev := time.Now()
	for loop.Err() == nil {
		if now := time.Now(); now.Sub(prev) > interval {
			// The gap between two of this poller's requests past its
			// interval: drain-test's own lateness.
			w.late.note("its "+string(which)+" poller", now.Sub(prev)-interval, now)
		}
		prev = time.Now()
		if dl, ok := loop.Deadline(); ok && !time.Now().Before(dl) {
			// The context's own timer may not have fired yet: a tick
			// that comes at the deadline makes no request.
			break
		}
		polls.Add(1)
		crash.Go(func() {
			defer polls.Done()
			tp := pollWithin(ctx, opts, which, window)
			if ctx.Err() != nil {
				return // cut by the end of the watch, not by the service
			}
			if IsGRPC(opts.URL) && !tp.Answered() && strings.Contains(tp.Err, "no HTTP/2 preface") {
				// The server answered gRPC before the signal: a
				// connection closed before its first frame is the
				// server closing, not a server that is not gRPC.
				tp.Err = "connection closed before the server's first HTTP/2 frame (the server closing)"
			}
			w.mu.Lock()
			w.polls = append(w.polls, tp)
			w.mu.Unlock()
		})
		select {
		case <-loop.Done():
		case <-t.C:
		}
	}
}

// shortErr names a transport failure without Go's wrapping.
func shortErr(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	case errors.Is(err, io.EOF):
		return "EOF (closed without an answer)"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// timedRequest is a Request with the wall-clock times it was made and
// ended.
type timedRequest struct {
	evidence.Request
	made, end time.Time
}

// slowRequest runs one in-flight request; wrote is told once the request
// has been written.
func slowRequest(ctx context.Context, hc *http.Client, opts *scheme.Options, wrote chan<- struct{}) (r timedRequest) {
	r.made = time.Now()
	defer func() { r.end = time.Now() }()
	req, err := httpprobe.NewRequest(ctx, opts)
	if err != nil {
		r.Err = err.Error()
		wrote <- struct{}{}
		return r
	}
	var once sync.Once
	tell := func() { once.Do(func() { wrote <- struct{}{} }) }
	defer tell()
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { tell() }}))
	resp, err := hc.Do(req)
	if err != nil {
		r.Err = shortErr(err)
		return r
	}
	defer resp.Body.Close()
	r.Status = resp.StatusCode
	n, err := io.Copy(io.Discard, resp.Body)
	r.Bytes = n
	if err != nil {
		r.Err = shortErr(err)
		if resp.ContentLength >= 0 {
			r.Framing = evidence.FramingLength
		} else if chunked(resp) {
			r.Framing = evidence.FramingChunked
		}
		return r
	}
	// Without a length (not chunked either: a chunked body without its
	// last chunk is an error above) the body ended when the connection
	// closed (RFC 9112 §6.3): Judge compares its length with the baseline.
	r.Delimited = resp.ContentLength < 0 && !chunked(resp)
	r.Complete = resp.ContentLength < 0 || n == resp.ContentLength
	switch {
	case r.Delimited:
		r.Framing = evidence.FramingClose
	case resp.ContentLength >= 0:
		r.Framing = evidence.FramingLength
	default:
		r.Framing = evidence.FramingChunked
	}
	return r
}

func chunked(resp *http.Response) bool {
	for _, te := range resp.TransferEncoding {
		if strings.EqualFold(te, "chunked") {
			return true
		}
	}
	return false
}
