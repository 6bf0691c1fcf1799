package watchcmd

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"sync"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/proxyenv"
	"github.com/healthctl/healthctl/internal/version"
	"github.com/healthctl/healthctl/internal/watch"
)

// heartbeatQueue is how many pings may wait behind the one being sent: a
// receiver slower than the sweeps makes the pings past it dropped (each
// said on stderr), never the sweeps wait.
const heartbeatQueue = 4

// heartbeat is --heartbeat: a dead-man's switch that says the watcher is
// alive. After each completed sweep it pings success, whatever the targets
// did; the failure form only when the state or metrics could not be
// written (the watcher's own trouble), or, with --heartbeat-on-failure,
// when a target failed. With --heartbeat-start it pings URL/start as each
// sweep begins (healthchecks.io measures the run). A sweep cut short by a
// signal sends nothing. The pings go out one at a time, in order, from one
// sender; --once waits for them before it exits, a long-running watch
// never does. A ping that cannot be sent, or that is dropped because the
// pings before it are still out, is one line on stderr, never the sweep's
// failure, and never names the URL.
type heartbeat struct {
	hb        *watch.Heartbeat
	src       string
	onFailure bool
	start     bool
	errw      io.Writer
	ctx       context.Context

	mu     sync.Mutex // guards queue (closed by wait) and errw's lines
	queue  chan heartbeatPing
	closed bool
	wg     sync.WaitGroup
}

type heartbeatPing struct {
	kind watch.Ping
	n    int64
	msg  string
}

// newHeartbeat is the --heartbeat of opts (nil without one); its proxy is
// the probe's rule over the same environment and --noproxy.
func newHeartbeat(ctx context.Context, f *cli.Factory, opts *Options, u *url.URL) *heartbeat {
	if u == nil {
		return nil
	}
	h := &heartbeat{
		hb: &watch.Heartbeat{URL: u, Timeout: opts.HeartbeatTimeout, UserAgent: "healthctl/" + version.String(),
			Proxy: proxyenv.FromEnv(f.Getenv, opts.Flags.Input().NoProxy)},
		src:       opts.source("heartbeat"),
		onFailure: opts.HeartbeatOnFailure,
		start:     opts.HeartbeatStart,
		errw:      f.Streams.Err,
		ctx:       ctx,
		queue:     make(chan heartbeatPing, heartbeatQueue),
	}
	h.wg.Go(func() {
		defer crash.Recover()
		for p := range h.queue {
			if h.ctx.Err() != nil {
				continue // a signal ends the watch: the pings left say nothing true
			}
			if err := h.hb.Ping(h.ctx, p.kind, p.msg); err != nil && h.ctx.Err() == nil {
				h.say("%s ping for sweep %d not sent: %s", p.kind, p.n, cli.OneLine(err.Error()))
			}
		}
	})
	return h
}

// say writes one line on stderr.
func (h *heartbeat) say(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.errw, "healthctl: watch: %s: "+format+"\n", append([]any{h.src}, args...)...)
}

// send queues a ping, or says it was dropped.
func (h *heartbeat) send(p heartbeatPing) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	select {
	case h.queue <- p:
		h.mu.Unlock()
	default:
		h.mu.Unlock()
		h.say("%s ping for sweep %d dropped: %d pings before it are still waiting (the receiver is slower than the sweeps)", p.kind, p.n, heartbeatQueue)
	}
}

// starting pings URL/start as sweep n begins (--heartbeat-start).
func (h *heartbeat) starting(n int64) {
	if h == nil || !h.start || h.ctx.Err() != nil {
		return
	}
	h.send(heartbeatPing{kind: watch.PingStart, n: n, msg: fmt.Sprintf("sweep %d starting", n)})
}

// after pings for sweep s, whose report ended with reportErr: success
// (the watcher is alive), or the failure form for the watcher's own
// trouble and, when asked for, a target's.
func (h *heartbeat) after(ctx context.Context, s *watch.Sweep, reportErr error) {
	if h == nil || s.Interrupted || ctx.Err() != nil {
		return
	}
	kind := watch.PingSuccess
	if reportErr != nil || (h.onFailure && s.Fail > 0) {
		kind = watch.PingFail
	}
	h.send(heartbeatPing{kind: kind, n: s.N, msg: sweepLine(s)})
}

// wait sends the pings still queued (each bounded by its own timeout) and
// stops the sender.
func (h *heartbeat) wait() {
	if h == nil {
		return
	}
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.queue)
	}
	h.mu.Unlock()
	h.wg.Wait()
}
