package probe

import (
	"context"
	"errors"
	"fmt"
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

// window is one of the probe's timers. A timer that fires after it was
// disarmed, re-armed or after the probe stopped its timers counts for
// nothing: gen and active are checked under run.mu when it fires.
type window struct {
	err    *windowError // &cause: the identity a window's cancellation is known by
	cause  windowError
	timer  *time.Timer
	gen    int
	active bool
}

// windows are the probe's three windows (connect, read, max-time) and what
// the first one to close saw. Guarded by run.mu.
type windows struct {
	cancel  context.CancelCauseFunc
	stopped bool
	connWin window
	readWin window
	maxWin  window
	// connDeadline is when the connect window of the current hop closes.
	connDeadline time.Time
	// windowStage and windowAddr are the stage running and the address
	// dialled when a window closed ("" before).
	windowStage classify.Stage
	windowAddr  string
	// windowThroughProxy: the read window closed on a forward proxy.
	windowThroughProxy bool
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
	p.noteWindow()
	// Cancel under the lock, so no stage can begin between the stage
	// noted and the cancellation (cancel only closes channels and starts
	// goroutines: it never calls back into the hooks that take p.mu).
	p.cancel(w.err)
	p.mu.Unlock()
}

// noteWindow remembers the stage and address of the first window to close
// (p.mu held).
func (p *run) noteWindow() {
	if p.windowStage == "" {
		p.windowStage, p.windowAddr = p.stage, p.address
	}
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

// windowed adjusts the observation when one of the probe's windows ended it
// (cause is the probe context's cause; p.mu held), and returns the error
// the probe reports. answered says the response headers had arrived.
func (p *run) windowed(err, cause error, answered bool, obs *classify.Observation, f *classify.Facts, res *Result) error {
	var win *windowError
	if err == nil || !errors.As(cause, &win) {
		return err
	}
	if p.windowStage == classify.StageConnect && p.dialErr != nil {
		// The window closed on one address while another had answered
		// for itself (refused, unreachable): that answer is the probe's.
		obs.Stage = classify.StageConnect
		res.Address, res.IPFamily = p.address, p.family
		return p.dialErr
	}
	// A window counts only when it ended the probe with an error.
	obs.WindowClosed = true
	// The deadline may have closed it before the timer did.
	p.noteWindow()
	obs.Stage = p.windowStage
	if answered && (obs.Stage == classify.StageHeaders || obs.Stage == classify.StageProxy) {
		// The headers had arrived (HTTP/2 can hand them over a moment
		// before the body stage is entered): the window closed on the
		// body.
		obs.Stage = classify.StageBody
	}
	if obs.Stage == classify.StageProxy && p.forward {
		// A forward proxy that says nothing may be waiting for the
		// server behind it: a timeout, like the server's own.
		obs.Stage = classify.StageHeaders
		p.windowThroughProxy = true
	}
	p.windowStage = obs.Stage
	res.Address = p.windowAddr
	f.WindowFlag, f.WindowLimit = win.flag, win.limit
	f.Address = p.windowAddr
	f.ThroughProxy = p.windowThroughProxy
	return err
}

// bodyRead ends the body stage of an exchange: the transfer phase (from the
// first byte to now) is recorded, and a body read without error leaves the
// probe done, so no window that closes from here on counts.
func (p *run) bodyRead(err error) {
	end := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.firstByte.IsZero() {
		p.record(PhaseTransfer, end.Sub(p.firstByte))
	}
	if err == nil {
		p.stage = classify.StageDone
	}
}
