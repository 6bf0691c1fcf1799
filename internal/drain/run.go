package drain

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/drain/service"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/probe/httpprobe"
	"github.com/healthctl/healthctl/internal/proc"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
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
	// InflightBody is a gRPC InflightURL's request message, serialized
	// protobuf (--inflight-body; nil: the empty message).
	InflightBody []byte
	// TrafficURL (optional: --traffic, else InflightURL) gets a new request
	// on a fresh connection every TrafficInterval from the signal until P
	// (none after: it checks the pre-drain); TrafficOK says which statuses serve it (nil: 200-399).
	TrafficURL string
	TrafficOK  func(status int) bool
	// TrafficTimeout bounds each traffic request, its connection and
	// whole body (--traffic-timeout; 0: min(S, 5 s)).
	TrafficTimeout time.Duration
	// Opts are each URL's probe options, built by the command from the
	// shared probe flags (--cacert, --insecure, -H, --resolve, -4/-6); an
	// endpoint without them gets plain defaults.
	Opts     map[evidence.Probe]*scheme.Options
	Signal   syscall.Signal
	Settings evidence.Settings
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

// Interval is how often readiness and liveness are polled (the judge
// counts in it).
const Interval = evidence.Interval

// pollTimeout bounds one health poll.
const pollTimeout = evidence.PollTimeout

// TrafficInterval is how often the traffic endpoint gets a new request
// (50 a second) from the signal until P: a listener that stops
// accepting in the pre-drain is seen within 20 ms of its first failed
// connection (after P, the health polls' 50 ms see it).
const TrafficInterval = 20 * time.Millisecond

// SlowTrafficInterval is the traffic's interval when the traffic endpoint
// is the --inflight URL (no --traffic): a slow path, 10 requests a second.
const SlowTrafficInterval = 100 * time.Millisecond

// Run starts (or attaches to) the service, waits for it to be ready,
// signals it and watches its shutdown. It returns what it saw for Judge.
// It never leaves a process it started running: on every return path the
// child's process group is killed. ctx cancellation (drain-test itself got
// SIGINT/SIGTERM) ends the run early, with interrupted set.
func Run(ctx context.Context, cfg Config) (obs evidence.Observation, interrupted bool, err error) {
	ctx = withProber(ctx, cfg.Prober)
	logf := cfg.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if cfg.Inflight <= 0 {
		cfg.Inflight = 2
	}
	obs.Signal = proc.SignalName(cfg.Signal)
	obs.SignalNumber = int(cfg.Signal)
	if len(cfg.Argv) > 0 {
		obs.Command = filepath.Base(cfg.Argv[0])
	}
	obs.InflightURL = cfg.InflightURL != ""
	if pu, err := url.Parse(cfg.InflightURL); err == nil && obs.InflightURL {
		obs.InflightGRPC = IsGRPC(pu)
	}
	obs.TrafficOK = cfg.TrafficOK
	if cfg.TrafficURL != "" {
		obs.Traffic = evidence.TrafficInfo{Window: cfg.trafficWindow(), FromInflight: cfg.TrafficURL == cfg.InflightURL}
	}
	if !proc.SignalsSupported {
		return obs, false, &service.StartError{Err: fmt.Errorf("drain-test sends %s to the service and judges its reaction, but %w: run it on Linux or macOS (--manifest lints a file anywhere)", obs.Signal, proc.ErrUnsupported)}
	}
	ep := cfg.endpoints()
	// The request log names each endpoint as the probe's redactor shows
	// it: no password, no secret query parameter.
	obs.Endpoints = map[evidence.Probe]string{}
	for which, o := range ep {
		if o.Redactor != nil {
			obs.Endpoints[which] = o.Redactor.URL(o.URL)
		} else {
			obs.Endpoints[which] = redact.NewRedactor(nil, nil).URL(o.URL)
		}
	}
	obs.Traffic.URL = obs.Endpoints[evidence.Traffic]
	obs.HostPorts, obs.GRPC = map[evidence.Probe]string{}, map[evidence.Probe]bool{}
	for which, u := range obs.Endpoints {
		obs.HostPorts[which] = hostPort(u)
		if pu, err := url.Parse(u); err == nil && u != "" && IsGRPC(pu) {
			obs.GRPC[which] = true
		}
	}
	if len(cfg.Argv) > 0 {
		if err := portsFree(ep); err != nil {
			return obs, false, err
		}
	}
	tg, err := service.Start(ctx, service.Spec{Argv: cfg.Argv, Env: cfg.Env, Pid: cfg.Pid, Stdout: cfg.Stdout, Stderr: cfg.Stderr}, logf)
	if err != nil {
		return obs, false, err
	}
	defer func() {
		if tg.Teardown(logf) && obs.Exit.Gone && !obs.Exit.Killed && !interrupted {
			obs.Leftover = true
		}
		// The tree is gone: its output's last bytes reach drain-test's
		// stderr before the report does (and never beside it).
		tg.OutputCopied(2 * time.Second)
	}()
	obs.Pid = tg.Pid()

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
	t0 := service.SendSignal(cfg.Signal, tg, logf)
	w := startWatch(ep, cfg, ka, t0)
	obs.KeepAlive.Watched = ka.conn != nil
	killedAt, interrupted := service.AwaitExit(ctx, cfg.Settings.ShutdownTimeout, tg, t0, logf)
	if !interrupted {
		interrupted = watchAfterExit(ctx, cfg.Settings, tg, t0, in)
	}
	// Stop watching: no new poll; those out end within their windows
	// (all of them at once when interrupted). Closing the kept-alive
	// connection ends a read its watch may be blocked in.
	w.stop()
	if w.stopTraffic != nil {
		w.stopTraffic()
	}
	if interrupted {
		w.cancel()
	}
	defer w.cancel()
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
		c, err := httpprobe.Dialer(withTimeout(o, 300*time.Millisecond))(ctx, "tcp", addr)
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
	return net.JoinHostPort(pu.Hostname(), scheme.DefaultPort(pu.Scheme))
}

// setupFailed says whether an in-flight request failed before t0 (a wrong
// --inflight path, a 404) or, with tg, whether the service exited before
// the signal.
func setupFailed(cfg Config, tg *service.Target, in *inflight, t0 time.Time) error {
	if tg != nil {
		select {
		case <-tg.Gone():
			return &SetupError{fmt.Sprintf("pid %d exited (%s) before the signal was sent: nothing to judge", tg.Pid(), tg.Status())}
		default:
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, r := range in.got {
		if r.end.Before(t0) && !r.OK() {
			hint := ""
			if r.Status != 0 {
				hint = " (a wrong path or method?)"
				if pu, err := url.Parse(cfg.InflightURL); err == nil && IsGRPC(pu) {
					hint = grpcSetupHint(r.Err, len(cfg.InflightBody))
				}
			}
			return &SetupError{fmt.Sprintf("--inflight %s: %s before the signal%s: nothing was judged", redactURL(cfg.InflightURL), evidence.DescribeRequest(r.Request), hint)}
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

// beforeSignal waits until readiness and liveness answer 200 (then sets
// obs.ReadyBefore), opens the kept-alive connection and starts the
// in-flight requests. When the service never gets ready, obs.NotReadyWhy
// says what it answered, or interrupted says ctx ended; nothing is to be
// signalled then.
func beforeSignal(ctx context.Context, ep endpoints, cfg Config, tg *service.Target, obs *evidence.Observation, logf func(string, ...any)) (ka *keepAlive, in *inflight, interrupted bool, err error) {
	if why, ok := waitReady(ctx, ep, cfg, tg); !ok {
		if ctx.Err() != nil {
			return nil, nil, true, nil
		}
		select {
		case <-tg.Gone():
			return nil, nil, false, &SetupError{why + ": nothing was signalled, nothing judged"}
		default:
		}
		obs.NotReadyWhy = why
		return nil, nil, false, nil
	}
	obs.ReadyBefore = true
	logf("readiness and liveness answer 200-399")
	ka = openKeepAlive(ep[evidence.Live])
	if ka.conn == nil {
		obs.KeepAlive.Why = ka.why
	}
	in = startInflight(cfg, ep[evidence.Inflight])
	in.settle(func() { poll(ctx, ep[evidence.Ready], evidence.Ready) })
	return ka, in, false, nil
}

// watchAfterExit keeps watching through P (an early exit leaves refused
// polls in the window) and a little past the exit (a wrapper's service
// still answering), and until the in-flight requests are done. It reports
// whether ctx ended meanwhile.
func watchAfterExit(ctx context.Context, s evidence.Settings, tg *service.Target, t0 time.Time, in *inflight) (interrupted bool) {
	end := t0.Add(s.PreDrain)
	select {
	case <-tg.Gone():
		if g := tg.GoneAt().Add(4 * Interval); g.After(end) {
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
	case <-time.After(service.KillMargin(s.ShutdownTimeout) + 2*time.Second):
	}
	return interrupted
}

// observe fills obs with what was seen, relative to t0, once the watch and
// the in-flight requests have ended.
func observe(obs *evidence.Observation, t0, killedAt time.Time, tg *service.Target, w *watcher, in *inflight) {
	obs.SignalledAt = t0
	for _, p := range w.polls {
		p.Poll.At = p.start.Sub(t0)
		obs.Polls = append(obs.Polls, p.Poll)
	}
	for _, r := range in.got {
		q := r.Request
		q.Made, q.End = r.made.Sub(t0), r.end.Sub(t0)
		obs.Inflight = append(obs.Inflight, q)
	}
	for _, e := range w.ka {
		ev := e.KeepAliveEvent
		ev.At = e.at.Sub(t0)
		obs.KeepAlive.Events = append(obs.KeepAlive.Events, ev)
	}
	obs.KeepAlive.Requests = w.kaRequests
	w.late.mu.Lock()
	if w.late.max > 0 {
		obs.Lateness = evidence.Lateness{Max: w.late.max, At: w.late.at.Sub(t0), What: w.late.what}
	}
	w.late.mu.Unlock()
	obs.InflightBaseline = in.baseline
	select {
	case <-tg.Gone():
		obs.Exit = evidence.Exit{Gone: true, At: tg.GoneAt().Sub(t0)}
	default:
	}
	if !killedAt.IsZero() {
		obs.Exit.Killed, obs.Exit.KilledAt = true, killedAt.Sub(t0)
	}
	if tg.Child() != nil && obs.Exit.Gone {
		st := tg.Child().Status()
		obs.Exit.Known = st.Exited || st.Signal != 0
		obs.Exit.Code = st.Code
		if st.Signal != 0 {
			obs.Exit.Signal = proc.SignalName(st.Signal)
		}
	}
}

// waitReady polls readiness and liveness until both answer 200, bounded by
// cfg.ReadyTimeout; it says what they answered when they did not.
func waitReady(ctx context.Context, ep endpoints, cfg Config, tg *service.Target) (string, bool) {
	deadline := time.Now().Add(cfg.ReadyTimeout)
	var lastR, lastL timedPoll
	for {
		lastR = poll(ctx, ep[evidence.Ready], evidence.Ready)
		lastL = poll(ctx, ep[evidence.Live], evidence.Live)
		if evidence.OKStatus(lastR.Status) && evidence.OKStatus(lastL.Status) {
			return "", true
		}
		select {
		case <-tg.Gone():
			st := "gone"
			if tg.Child() != nil {
				st = tg.Child().Status().String()
			}
			return fmt.Sprintf("pid %d exited (%s) before readiness and liveness answered 200-399", tg.Pid(), st), false
		case <-ctx.Done():
			return "interrupted", false
		case <-time.After(Interval):
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("not both 200-399 within --ready-timeout %s (last: readiness %s, liveness %s)", cfg.ReadyTimeout, evidence.Describe(lastR.Poll), evidence.Describe(lastL.Poll)), false
		}
	}
}
