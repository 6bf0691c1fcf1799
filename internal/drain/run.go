package drain

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/proc"
)

// Config is one drain-test run.
type Config struct {
	// Argv starts the service (--exec); Pid attaches to a running one
	// (--pid). Exactly one is set.
	Argv []string
	// Env is added to the service's environment.
	Env []string
	Pid int
	// ReadyURL and LiveURL are polled; InflightURL (optional) answers slowly.
	ReadyURL, LiveURL, InflightURL string
	// TrafficURL (optional, from InflightURL's host:port) gets a short
	// request every TrafficInterval during [0, P).
	TrafficURL string
	// Opts are each URL's probe options, built by the command from the
	// shared probe flags (--cacert, --insecure, -H, --resolve, -4/-6); an
	// endpoint without them gets plain defaults.
	Opts     map[Probe]*probe.Options
	Signal   syscall.Signal
	Settings Settings
	// ReadyTimeout bounds the wait for readiness before the signal.
	ReadyTimeout time.Duration
	// Inflight is how many slow requests are in flight at the signal.
	Inflight int
	// Stdout and Stderr receive the service's output (nil: discarded).
	Stdout, Stderr io.Writer
	// Log receives one line per step (nil: none).
	Log func(format string, args ...any)
	// Prober makes the health polls (nil: probe.Run): the command passes
	// the factory's, so a test's fake or panicking prober reaches them.
	Prober probe.Prober
}

// Interval is how often readiness and liveness are polled.
const Interval = 50 * time.Millisecond

// TrafficInterval is how often the traffic endpoint gets a new request
// during the pre-drain.
const TrafficInterval = 100 * time.Millisecond

// KillMargin is how long past S drain-test waits before it kills.
func KillMargin(s time.Duration) time.Duration { return time.Second + s/10 }

// pollTimeout bounds one health poll.
const pollTimeout = time.Second

// StartError is a service that could not be started or attached to.
type StartError struct{ Err error }

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// target is the process under test, started or attached.
type target struct {
	child *proc.Child
	pid   int
	gone  chan struct{}
	// goneAt is when the process was seen gone; written before gone closes.
	goneAt time.Time
	// unhook removes the crash hook that kills a started child.
	unhook func()
}

// Run starts (or attaches to) the service, waits for it to be ready,
// signals it and watches its shutdown. It returns what it saw for Judge.
// It never leaves a process it started running: on every return path the
// child's process group is killed. ctx cancellation (drain-test itself got
// SIGINT/SIGTERM) ends the run early, with interrupted set.
func Run(ctx context.Context, cfg Config) (obs Observation, interrupted bool, err error) {
	ctx = withProber(ctx, cfg.Prober)
	logf := cfg.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if cfg.Inflight <= 0 {
		cfg.Inflight = 2
	}
	obs.Signal = proc.SignalName(cfg.Signal)
	obs.InflightURL = cfg.InflightURL != ""
	if !proc.SignalsSupported {
		return obs, false, &StartError{fmt.Errorf("drain-test sends %s to the service and judges its reaction, but %w: run it on Linux or macOS (--manifest lints a file anywhere)", obs.Signal, proc.ErrUnsupported)}
	}
	ep := cfg.endpoints()
	if len(cfg.Argv) > 0 {
		if err := portsFree(ep); err != nil {
			return obs, false, err
		}
	}
	tg, err := start(ctx, cfg, logf)
	if err != nil {
		return obs, false, err
	}
	defer func() {
		if tg.teardown(logf) && obs.Exit.Gone && !obs.Exit.Killed && !interrupted {
			obs.Leftover = true
		}
	}()
	obs.Pid = tg.pid

	// Before the signal: ready, a kept-alive connection, requests in flight.
	ka, in, interrupted, err := beforeSignal(ctx, ep, cfg, tg, &obs, logf)
	if err != nil || !obs.ReadyBefore {
		return obs, interrupted, err
	}
	defer in.cancel()
	if err := setupFailed(cfg, tg, in, time.Now()); err != nil {
		return obs, false, err
	}

	// t=0: the signal; then watch until the process is gone and the
	// in-flight requests are done.
	t0 := sendSignal(cfg.Signal, tg, logf)
	w := startWatch(ep, cfg, ka, t0)
	obs.KeepAlive.Watched = ka.conn != nil
	killedAt, interrupted := awaitExit(ctx, cfg.Settings.ShutdownTimeout, tg, t0, logf)
	if !interrupted {
		interrupted = watchAfterExit(ctx, cfg.Settings, tg, t0, in)
	}
	// Stop watching. Closing the kept-alive connection ends a read its
	// watch may be blocked in.
	w.cancel()
	in.cancel()
	if ka.conn != nil {
		ka.conn.Close()
	}
	w.wg.Wait()
	in.wg.Wait()

	// What was seen, relative to t=0.
	observe(&obs, t0, killedAt, tg, w, in)
	if !interrupted {
		if err := setupFailed(cfg, nil, in, t0); err != nil {
			return obs, false, err
		}
	}
	return obs, interrupted, nil
}

// SetupError is a problem of the experiment's set-up, not of the service:
// a port another process holds, a service that exited before the signal,
// an --inflight URL that failed before it. Nothing is judged.
type SetupError struct{ Msg string }

func (e *SetupError) Error() string { return e.Msg }

// portsFree checks, before starting the service, that nothing answers on
// the ports it is to serve: a stale process holding the port would be
// judged instead of the service.
func portsFree(ep endpoints) error {
	seen := map[string]bool{}
	for _, o := range ep {
		addr := hostPort(o.URL.String())
		if addr == "" || seen[addr] {
			continue
		}
		seen[addr] = true
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		c, err := probe.Dialer(withTimeout(o, 300*time.Millisecond))(ctx, "tcp", addr)
		cancel()
		if err == nil {
			c.Close()
			return &SetupError{fmt.Sprintf("%s already accepts connections before the service was started: another process holds the port (stop it, or use another port); nothing was run", addr)}
		}
	}
	return nil
}

// hostPort is u's host:port with the scheme's default port ("" when u
// cannot be parsed).
func hostPort(u string) string {
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" {
		return ""
	}
	if pu.Port() != "" {
		return pu.Host
	}
	if pu.Scheme == "https" {
		return net.JoinHostPort(pu.Hostname(), "443")
	}
	return net.JoinHostPort(pu.Hostname(), "80")
}

// setupFailed says whether an in-flight request failed before t0 (a wrong
// --inflight path, a 404) or, with tg, whether the service exited before
// the signal.
func setupFailed(cfg Config, tg *target, in *inflight, t0 time.Time) error {
	if tg != nil {
		select {
		case <-tg.gone:
			return &SetupError{fmt.Sprintf("pid %d exited (%s) before the signal was sent: nothing to judge", tg.pid, tg.status())}
		default:
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, r := range in.got {
		if r.end.Before(t0) && !r.ok() {
			hint := ""
			if r.Status != 0 {
				hint = " (a wrong path or method?)"
			}
			return &SetupError{fmt.Sprintf("--inflight %s: %s before the signal%s: nothing was judged", redactURL(cfg.InflightURL), describeRequest(r.Request), hint)}
		}
	}
	return nil
}

// redactURL drops a URL's password.
func redactURL(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return "the URL"
	}
	return pu.Redacted()
}

// status says how a gone target ended, when it can be read.
func (tg *target) status() string {
	if tg.child != nil {
		return tg.child.Status().String()
	}
	return "gone"
}

// start starts the service (--exec) or attaches to a running one (--pid).
// A service that cannot be started or signalled is a *StartError.
func start(ctx context.Context, cfg Config, logf func(string, ...any)) (*target, error) {
	tg := &target{gone: make(chan struct{})}
	if len(cfg.Argv) == 0 {
		switch err := signalPid(cfg.Pid, 0); {
		case errors.Is(err, syscall.ESRCH) || (err == nil && !Alive(cfg.Pid)):
			return nil, &StartError{fmt.Errorf("--pid %d: no such process", cfg.Pid)}
		case errors.Is(err, syscall.EPERM):
			return nil, &StartError{fmt.Errorf("--pid %d: not permitted to signal it (run drain-test as its user, or as root)", cfg.Pid)}
		}
		tg.pid = cfg.Pid
		crash.Go(func() { watchPid(ctx, tg) })
		return tg, nil
	}
	keepDescendants()
	c, err := proc.Start(proc.Spec{Argv: cfg.Argv, Env: cfg.Env, Stdout: cfg.Stdout, Stderr: cfg.Stderr, Attr: childAttr})
	if err != nil {
		return nil, &StartError{fmt.Errorf("cannot start the service %q: %w", cfg.Argv[0], unwrapExec(err))}
	}
	tg.child, tg.pid = c, c.Pid()
	tg.unhook = crash.OnCrash(func() { tg.killAll() })
	crash.Go(func() {
		<-c.Done()
		tg.goneAt = time.Now()
		close(tg.gone)
	})
	logf("started pid %d: %s", tg.pid, strings.Join(cfg.Argv, " "))
	return tg, nil
}

// unwrapExec drops os/exec's "fork/exec PATH:" prefix: the caller names
// the program already.
func unwrapExec(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// teardown kills whatever a started child left (a wrapper's orphan, a
// helper, a daemon that called setsid) with the child, and returns once
// they are gone; it reports whether anything was left. An attached process
// is not healthctl's to kill.
func (tg *target) teardown(logf func(string, ...any)) (leftover bool) {
	if tg.child == nil {
		return false
	}
	defer tg.unhook()
	if n := othersLeft(tg.pid); groupExists(tg.pid) || n > 0 {
		leftover = true
		logf("killing what is left of process group %d and every process it started", tg.pid)
	}
	if n := tg.killAll(); n > 0 {
		logf("%d processes started by pid %d still run 5s after SIGKILL", n, tg.pid)
	}
	return leftover
}

// killAll kills the child's process group and (Linux) every descendant,
// waits for the child, and returns once the rest are gone too (5s at
// most): a check right after healthctl exits finds nothing listening. It
// returns how many still ran.
func (tg *target) killAll() int {
	tg.child.Kill()
	n := killTree(tg.pid, 5*time.Second)
	for end := time.Now().Add(5 * time.Second); groupExists(tg.pid) && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	return n
}

// beforeSignal waits until readiness and liveness answer 200 (then sets
// obs.ReadyBefore), opens the kept-alive connection and starts the
// in-flight requests. When the service never gets ready, obs.NotReadyWhy
// says what it answered, or interrupted says ctx ended; nothing is to be
// signalled then.
func beforeSignal(ctx context.Context, ep endpoints, cfg Config, tg *target, obs *Observation, logf func(string, ...any)) (ka *keepAlive, in *inflight, interrupted bool, err error) {
	if why, ok := waitReady(ctx, ep, cfg, tg); !ok {
		if ctx.Err() != nil {
			return nil, nil, true, nil
		}
		select {
		case <-tg.gone:
			return nil, nil, false, &SetupError{why + ": nothing was signalled, nothing judged"}
		default:
		}
		obs.NotReadyWhy = why
		return nil, nil, false, nil
	}
	obs.ReadyBefore = true
	logf("readiness and liveness answer 200-399")
	ka = openKeepAlive(ep[Live])
	if ka.conn == nil {
		obs.KeepAlive.Why = ka.why
	}
	return ka, startInflight(cfg, ep[Inflight]), false, nil
}

// inflight are the slow requests in flight at the signal.
type inflight struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	got    []timedRequest
}

// startInflight starts cfg.Inflight slow requests on cfg.InflightURL (none
// without one) and returns once each has been written, or after 2s.
func startInflight(cfg Config, opts *probe.Options) *inflight {
	ctx, cancel := context.WithCancel(context.Background())
	in := &inflight{cancel: cancel}
	if opts == nil {
		return in
	}
	wrote := make(chan struct{}, cfg.Inflight)
	ic := &http.Client{Transport: probe.Transport(withTimeout(opts, pollTimeout)),
		Timeout:       cfg.Settings.ShutdownTimeout + KillMargin(cfg.Settings.ShutdownTimeout) + 2*time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i := 0; i < cfg.Inflight; i++ {
		in.wg.Add(1)
		crash.Go(func() {
			defer in.wg.Done()
			r := slowRequest(ctx, ic, opts, wrote)
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
	// Give the server a moment to start handling what it has read.
	time.Sleep(50 * time.Millisecond)
	return in
}

// sendSignal sends sig to the process itself (not its group, as an
// orchestrator signals PID 1) and returns t=0, when it was sent.
func sendSignal(sig syscall.Signal, tg *target, logf func(string, ...any)) time.Time {
	t0 := time.Now()
	var err error
	if tg.child != nil {
		err = tg.child.Signal(sig)
	} else {
		err = signalPid(tg.pid, sig)
	}
	if err != nil {
		logf("signalling pid %d: %v", tg.pid, err)
	}
	logf("sent %s to pid %d", proc.SignalName(sig), tg.pid)
	return t0
}

// watcher polls readiness and liveness every Interval, and watches the
// kept-alive connection, from the signal until cancel.
type watcher struct {
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	mu         sync.Mutex
	polls      []timedPoll
	ka         []timedKA
	kaRequests int
}

func startWatch(ep endpoints, cfg Config, ka *keepAlive, t0 time.Time) *watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{cancel: cancel}
	type pollSpec struct {
		probe    Probe
		interval time.Duration
		until    time.Time // zero: until cancel
	}
	specs := []pollSpec{{Ready, Interval, time.Time{}}, {Live, Interval, time.Time{}}}
	if ep[Traffic] != nil {
		specs = append(specs, pollSpec{Traffic, TrafficInterval, t0.Add(cfg.Settings.PreDrain)})
	}
	for _, p := range specs {
		w.wg.Add(1)
		crash.Go(func() {
			defer w.wg.Done()
			w.pollEvery(ctx, ep[p.probe], p.probe, p.interval, p.until)
		})
	}
	if ka.conn != nil {
		w.wg.Add(1)
		crash.Go(func() {
			defer w.wg.Done()
			w.ka, w.kaRequests = ka.watch(ctx)
		})
	}
	return w
}

// pollEvery polls u every interval, start to start, until ctx ends or, when
// until is set, until then.
func (w *watcher) pollEvery(ctx context.Context, opts *probe.Options, which Probe, interval time.Duration, until time.Time) {
	next := time.Now()
	for ctx.Err() == nil && (until.IsZero() || time.Now().Before(until)) {
		tp := poll(ctx, opts, which)
		if ctx.Err() != nil && tp.Status == 0 {
			return // cut by the end of the watch, not by the service
		}
		w.mu.Lock()
		w.polls = append(w.polls, tp)
		w.mu.Unlock()
		next = next.Add(interval)
		if d := time.Until(next); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		} else {
			next = time.Now()
		}
	}
}

// awaitExit waits for the process to exit. Past S plus KillMargin it kills
// it (killedAt says when); when ctx ends (drain-test interrupted) it kills
// a started child and waits for it.
func awaitExit(ctx context.Context, S time.Duration, tg *target, t0 time.Time, logf func(string, ...any)) (killedAt time.Time, interrupted bool) {
	deadline := time.NewTimer(S + KillMargin(S))
	defer deadline.Stop()
	select {
	case <-tg.gone:
	case <-deadline.C:
		killedAt = time.Now()
		logf("pid %d still running %s after the signal (SHUTDOWN_TIMEOUT %s + margin): killing it", tg.pid, killedAt.Sub(t0).Round(time.Millisecond), S)
		tg.kill()
		select {
		case <-tg.gone:
		case <-time.After(5 * time.Second):
			// Unkillable (uninterruptible sleep) or not ours to kill: the
			// report says it did not exit.
			logf("pid %d still there 5s after SIGKILL; giving up", tg.pid)
		}
	case <-ctx.Done():
		interrupted = true
		logf("interrupted: killing pid %d", tg.pid)
		if tg.child != nil {
			tg.child.Kill()
			<-tg.gone
		}
	}
	return killedAt, interrupted
}

// watchAfterExit keeps watching through P (an early exit leaves refused
// polls in the window) and a little past the exit (a wrapper's service
// still answering), and until the in-flight requests are done. It reports
// whether ctx ended meanwhile.
func watchAfterExit(ctx context.Context, s Settings, tg *target, t0 time.Time, in *inflight) (interrupted bool) {
	end := t0.Add(s.PreDrain)
	select {
	case <-tg.gone:
		if g := tg.goneAt.Add(4 * Interval); g.After(end) {
			end = g
		}
	default:
	}
	select {
	case <-time.After(time.Until(end)):
	case <-ctx.Done():
		interrupted = true
	}
	done := make(chan struct{})
	crash.Go(func() { in.wg.Wait(); close(done) })
	select {
	case <-done:
	case <-ctx.Done():
		interrupted = true
	case <-time.After(KillMargin(s.ShutdownTimeout) + 2*time.Second):
	}
	return interrupted
}

// observe fills obs with what was seen, relative to t0, once the watch and
// the in-flight requests have ended.
func observe(obs *Observation, t0, killedAt time.Time, tg *target, w *watcher, in *inflight) {
	for _, p := range w.polls {
		p.Poll.At = p.start.Sub(t0)
		obs.Polls = append(obs.Polls, p.Poll)
	}
	for _, r := range in.got {
		q := r.Request
		q.End = r.end.Sub(t0)
		obs.Inflight = append(obs.Inflight, q)
	}
	for _, e := range w.ka {
		ev := e.KeepAliveEvent
		ev.At = e.at.Sub(t0)
		obs.KeepAlive.Events = append(obs.KeepAlive.Events, ev)
	}
	obs.KeepAlive.Requests = w.kaRequests
	select {
	case <-tg.gone:
		obs.Exit = Exit{Gone: true, At: tg.goneAt.Sub(t0)}
	default:
	}
	if !killedAt.IsZero() {
		obs.Exit.Killed, obs.Exit.KilledAt = true, killedAt.Sub(t0)
	}
	if tg.child != nil && obs.Exit.Gone {
		st := tg.child.Status()
		obs.Exit.Known = st.Exited || st.Signal != 0
		obs.Exit.Code = st.Code
		if st.Signal != 0 {
			obs.Exit.Signal = proc.SignalName(st.Signal)
		}
	}
}

// kill ends the process past the deadline: the child's whole group, or the
// attached pid (as an orchestrator's SIGKILL would).
func (tg *target) kill() {
	if tg.child != nil {
		_ = tg.child.SignalGroup(syscall.SIGKILL)
		return
	}
	_ = signalPid(tg.pid, syscall.SIGKILL)
}

// watchPid closes tg.gone once the attached pid no longer runs (no such
// process, or a zombie its parent has not reaped yet).
func watchPid(ctx context.Context, tg *target) {
	for {
		if !Alive(tg.pid) {
			tg.goneAt = time.Now()
			close(tg.gone)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitReady polls readiness and liveness until both answer 200, bounded by
// cfg.ReadyTimeout; it says what they answered when they did not.
func waitReady(ctx context.Context, ep endpoints, cfg Config, tg *target) (string, bool) {
	deadline := time.Now().Add(cfg.ReadyTimeout)
	var lastR, lastL timedPoll
	for {
		lastR = poll(ctx, ep[Ready], Ready)
		lastL = poll(ctx, ep[Live], Live)
		if okStatus(lastR.Status) && okStatus(lastL.Status) {
			return "", true
		}
		select {
		case <-tg.gone:
			st := "gone"
			if tg.child != nil {
				st = tg.child.Status().String()
			}
			return fmt.Sprintf("pid %d exited (%s) before readiness and liveness answered 200-399", tg.pid, st), false
		case <-ctx.Done():
			return "interrupted", false
		case <-time.After(Interval):
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("not both 200-399 within --ready-timeout %s (last: readiness %s, liveness %s)", cfg.ReadyTimeout, describe(lastR.Poll), describe(lastL.Poll)), false
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

// timedRequest is a Request with the wall-clock time it ended.
type timedRequest struct {
	Request
	end time.Time
}

// slowRequest runs one in-flight request; wrote is told once the request
// has been written.
func slowRequest(ctx context.Context, hc *http.Client, opts *probe.Options, wrote chan<- struct{}) (r timedRequest) {
	defer func() { r.end = time.Now() }()
	req, err := probe.NewRequest(ctx, opts)
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
		return r
	}
	// Without a length (not chunked either: a chunked body without its
	// last chunk is an error above) the body ended when the connection
	// closed: Judge compares that with the process's exit.
	r.Delimited = resp.ContentLength < 0 && !chunked(resp)
	r.Complete = resp.ContentLength < 0 || n == resp.ContentLength
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
	KeepAliveEvent
	at time.Time
}

// openKeepAlive connects to u's host and reads one response, to check that
// the server keeps the connection open.
func openKeepAlive(opts *probe.Options) *keepAlive {
	ka := &keepAlive{}
	pu := opts.URL
	if pu.Scheme != "http" && pu.Scheme != "https" {
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
	c, err := probe.Dialer(withTimeout(opts, pollTimeout))(ctx, "tcp", hostPort(pu.String()))
	if err == nil && pu.Scheme == "https" {
		tc := probe.TLSConfig(opts)
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
	if closeHdr, _, err := ka.exchange(); err != nil || closeHdr {
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

// exchange writes one request and reads its response. partial is the
// number of response bytes read when it failed.
func (ka *keepAlive) exchange() (closeHdr bool, partial int64, err error) {
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
	ev := func(kind KeepAliveKind, detail string) {
		events = append(events, timedKA{KeepAliveEvent{Kind: kind, Detail: detail}, time.Now()})
	}
	for ctx.Err() == nil {
		_ = ka.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := ka.br.Peek(1); err != nil {
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout():
			case errors.Is(err, io.EOF):
				ev(KeepAliveClosedIdle, "the server closed the idle kept-alive connection")
				return
			case ctx.Err() != nil:
				return
			default:
				ev(KeepAliveReset, "idle connection: "+shortErr(err))
				return
			}
		}
		closeHdr, partial, err := ka.exchange()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && closeHdr:
			requests++
			ev(KeepAliveClosedByHeader, "a response said Connection: close")
			return
		case err == nil:
			requests++
		case partial > 0:
			ev(KeepAliveReset, fmt.Sprintf("the connection ended %d bytes into a response: %s", partial, shortErr(err)))
			return
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE):
			// The server had closed it (FIN) as the request went out: a
			// clean close racing the request, which clients retry.
			ev(KeepAliveClosedIdle, "the server closed the kept-alive connection between responses")
			return
		default:
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				ev(KeepAliveNoAnswer, "no answer within 2s on the kept-alive connection; stopped watching it")
				return
			}
			// A reset before any byte of the response is the close race
			// every keep-alive client meets: the server closed the idle
			// connection as the request arrived (unread data turns its
			// FIN into a reset). Clients retry it; it is not mid-response.
			ev(KeepAliveClosedIdle, "the server closed the kept-alive connection as a request arrived ("+shortErr(err)+" before any byte of the response)")
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return events, requests
}
