package heartbeat

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/output"
)

// queueLen is how many pings may wait behind the one being sent: a
// receiver slower than the sweeps makes the pings past it dropped (each
// said on stderr), never the sweeps wait.
const queueLen = 4

// Sender is --heartbeat: a dead-man's switch that says the watcher is
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
type Sender struct {
	hb        *Pinger
	src       string
	onFailure bool
	start     bool
	errw      io.Writer
	ctx       context.Context

	mu     sync.Mutex // guards queue (closed by wait) and errw's lines
	queue  chan queued
	closed bool
	wg     sync.WaitGroup
}

type queued struct {
	kind Ping
	n    int64
	msg  string
}

// NewSender starts the sender of p's pings until Wait; src names the
// setting in its lines on errw ("--heartbeat"), onFailure and start are
// --heartbeat-on-failure and --heartbeat-start. A cancelled ctx (a
// signal) sends nothing more.
func NewSender(ctx context.Context, p *Pinger, src string, onFailure, start bool, errw io.Writer) *Sender {
	h := &Sender{
		hb:        p,
		src:       src,
		onFailure: onFailure,
		start:     start,
		errw:      errw,
		ctx:       ctx,
		queue:     make(chan queued, queueLen),
	}
	h.wg.Go(func() {
		defer crash.Recover()
		for p := range h.queue {
			if h.ctx.Err() != nil {
				continue // a signal ends the watch: the pings left say nothing true
			}
			if err := h.hb.Ping(h.ctx, p.kind, p.msg); err != nil && h.ctx.Err() == nil {
				h.say("%s ping for sweep %d not sent: %s", p.kind, p.n, output.OneLine(err.Error()))
			}
		}
	})
	return h
}

// say writes one line on stderr.
func (h *Sender) say(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.errw, "healthctl: watch: %s: "+format+"\n", append([]any{h.src}, args...)...)
}

// send queues a ping, or says it was dropped.
func (h *Sender) send(p queued) {
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
		h.say("%s ping for sweep %d dropped: %d pings before it are still waiting (the receiver is slower than the sweeps)", p.kind, p.n, queueLen)
	}
}

// Starting pings URL/start as sweep n begins (--heartbeat-start).
func (h *Sender) Starting(n int64) {
	if h == nil || !h.start || h.ctx.Err() != nil {
		return
	}
	h.send(queued{kind: PingStart, n: n, msg: fmt.Sprintf("sweep %d starting", n)})
}

// After pings for sweep n, whose report ended with reportErr, line its
// summary (the ping's message): success (the watcher is alive), or the
// failure form for the watcher's own trouble and, when asked for, a
// target's (failed). An interrupted sweep sends nothing.
func (h *Sender) After(ctx context.Context, n int64, interrupted, failed bool, line string, reportErr error) {
	if h == nil || interrupted || ctx.Err() != nil {
		return
	}
	kind := PingSuccess
	if reportErr != nil || (h.onFailure && failed) {
		kind = PingFail
	}
	h.send(queued{kind: kind, n: n, msg: line})
}

// Wait sends the pings still queued (each bounded by its own timeout) and
// stops the sender.
func (h *Sender) Wait() {
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
