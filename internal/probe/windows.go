package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
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

// deadlined is a context that reports a deadline (at, or its parent's when
// that is earlier) without a timer of its own: the windows' timer cancels
// the parent when the window closes. What takes the deadline from the
// context (a connect's wait, a lookup's queries) ends at it whatever the
// timer does. A sweep makes one probe a target, and a timer, context and
// channel for each of two deadlines were a tenth of its allocations. The
// parent is a cancel context: Done, Err, Value and context.Cause are its
// own, so a child of deadlined attaches to it directly.
type deadlined struct {
	context.Context
	at time.Time
	// done is the parent's Done, read once: a connect, a read and every
	// select of the probe ask for it, and a cancel context's never changes.
	done <-chan struct{}
}

func newDeadlined(parent context.Context, at time.Time) deadlined {
	return deadlined{parent, at, parent.Done()}
}

func (c *deadlined) Done() <-chan struct{} { return c.done }

func (c *deadlined) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.at) {
		return d, true
	}
	return c.at, true
}

// window is one of the probe's three windows. A window that closes after it
// was disarmed, re-armed or after the probe stopped its timers counts for
// nothing: gen, active and due are checked under run.mu when the timer
// fires.
type window struct {
	cause windowError
	due   time.Time // when it closes, while active
	gen   int
	// active: armed and not yet disarmed.
	active bool
}

// err is the cause the window cancels the probe with (its identity: a
// cause is known to be a window's by its type).
func (w *window) err() *windowError { return &w.cause }

// windows are the probe's three windows (connect, read, max-time) and what
// the first one to close saw. Guarded by run.mu.
type windows struct {
	cancel  context.CancelCauseFunc
	stopped bool
	// closer is its worker's closer when the probe holds it (nil when
	// not): no registration of its own closes its connections when a
	// window ends it (end does), and the windows' timer is the closer's.
	closer *closer
	// timer is the one timer of the three windows, set for the earliest
	// to close (timerAt, zero when it is not known to be set). A window
	// disarmed leaves it set: when it fires with no window due it sets
	// itself for the next. A sweep makes one probe a target, so one timer
	// a probe instead of one a window is a third of its timers.
	timer   *time.Timer
	timerAt time.Time
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
	// overdue is the window that was due, its timer not yet run, when
	// the timers stopped (nil when none was): a starved timer goroutine
	// lets the deadline the window set end the exchange first.
	overdue *window
	// hopEnd, when set, is what the connect and read windows close in
	// place of the probe: the attempt on one host of several that is
	// not the last (libpq's connect_timeout, per host), whose windows
	// give way to the next host while --max-time lasts. hopWindow is
	// the window that closed it (nil while none did).
	hopEnd    context.CancelCauseFunc
	hopWindow *window
}

// arm starts (or restarts) a window with p.mu held: it closes d from now.
func (p *run) arm(w *window, d time.Duration) {
	now := time.Now()
	p.armAt(w, now, now.Add(d))
}

// armAt is arm for a window that closes at due, now being now: a probe
// reads the clock once for a stage it enters and the window it arms.
func (p *run) armAt(w *window, now, due time.Time) {
	w.gen++
	w.active = true
	w.due = due
	p.setTimer(now, due)
}

// setTimer makes the windows' timer fire at or before at (p.mu held).
func (p *run) setTimer(now, at time.Time) {
	switch {
	case p.stopped, p.hooks.starvedTimer:
	case p.timer == nil && p.closer != nil:
		// The worker's timer, shared by its probes one after another:
		// one a worker, not one a probe (closer.tick).
		p.timerAt = at
		p.timer = p.closer.arm(at.Sub(now))
	case p.timer == nil:
		p.timerAt = at
		p.timer = time.AfterFunc(at.Sub(now), p.tick)
	case p.timerAt.IsZero() || at.Before(p.timerAt):
		p.timerAt = at
		p.timer.Reset(at.Sub(now))
	}
}

// disarm stops a window with p.mu held; the timer, when it fires, finds it
// inactive.
func (p *run) disarm(w *window) {
	w.gen++
	w.active = false
}

// tick is the windows' timer: it closes the earliest window that is due,
// else sets itself for the next one to close.
func (p *run) tick() {
	defer crash.Recover() // runs on a timer's goroutine
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timerAt = time.Time{}
	if p.stopped {
		return
	}
	now := time.Now()
	var due, next *window
	for _, w := range [...]*window{&p.connWin, &p.readWin, &p.maxWin} {
		switch {
		case !w.active:
		case !w.due.After(now):
			if due == nil || w.due.Before(due.due) {
				due = w
			}
		case next == nil || w.due.Before(next.due):
			next = w
		}
	}
	if due != nil {
		p.closeWindow(due)
		return
	}
	if next != nil {
		p.setTimer(now, next.due)
	}
}

// closeWindow ends the probe because w closed, remembering the stage that
// was running at that moment (p.mu held). It cancels under the lock, so no
// stage can begin between the stage noted and the cancellation (cancel
// only closes channels and starts goroutines: it never calls back into the
// hooks that take p.mu).
func (p *run) closeWindow(w *window) {
	if p.hopEnd != nil && w != &p.maxWin {
		p.closeHop(w)
		return
	}
	p.noteWindow()
	p.end(w.err())
}

// closeHop ends the attempt on one host of several because w closed
// (p.mu held): its context is cancelled and the connections made so far
// closed (the earlier hosts' are already), and the timer is set for
// --max-time, which still bounds the next host.
func (p *run) closeHop(w *window) {
	p.hopWindow = w
	p.hopEnd(w.err())
	p.hopEnd = nil
	p.disarm(&p.connWin)
	p.disarm(&p.readWin)
	cs := append([]net.Conn(nil), p.conns...)
	crash.Go(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	if p.maxWin.active {
		p.setTimer(time.Now(), p.maxWin.due)
	}
}

// end ends the probe with cause (p.mu held): it cancels the probe's
// context, and closes its connections as the probe's own registration on
// the context would (on a goroutine of their own: closeConns takes p.mu)
// when the probe holds its worker's closer instead.
func (p *run) end(cause error) {
	p.cancel(cause)
	if p.closer != nil {
		crash.Go(p.closeConns)
	}
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
	now := time.Now()
	for _, w := range [...]*window{&p.connWin, &p.readWin, &p.maxWin} {
		if w.active && !w.due.After(now) && (p.overdue == nil || w.due.Before(p.overdue.due)) {
			p.overdue = w
		}
	}
	p.stopped = true
	p.disarm(&p.connWin)
	p.disarm(&p.readWin)
	p.disarm(&p.maxWin)
	if p.timer != nil {
		p.timer.Stop()
	}
}

// windowed adjusts the observation when one of the probe's windows ended it
// (cause is the probe context's cause; p.mu held), and returns the error
// the probe reports. answered says the response headers had arrived.
func (p *run) windowed(err, cause error, answered bool, obs *classify.Observation, f *classify.Facts, res *Result) error {
	if err == nil {
		return nil
	}
	var win *windowError // on the heap (errors.As): declared past the common return
	if !errors.As(cause, &win) {
		if p.overdue == nil || !deadlineErr(err) {
			return err
		}
		// The deadline a window set ended the exchange before the
		// window's timer ran (a loaded machine starves timers): the
		// window closed all the same, and the sentence says which.
		win = p.overdue.err()
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
	if obs.Stage == classify.StageHeaders && !answered {
		if sent, size, unsent := p.bodyUnsent(); unsent {
			// No answer, and the body has not all gone out: the
			// server stopped reading the request.
			obs.Stage = classify.StageWrite
			f.BodySent, f.BodySize = sent, size
		}
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

// deadlineErr says err is a deadline's: a connection's (i/o timeout) or a
// context's.
func deadlineErr(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
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

// openConnectWindow starts a connectionless exchange (dns:// over UDP,
// icmp://) toward u: its first stage entered and the connect window armed,
// as the dialler does for a connection. It returns the window's deadline
// for closeConnectWindow.
func (p *run) openConnectWindow(u *url.URL) time.Time {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hopURL, p.serverName = u, u.Hostname()
	p.enterAt(p.firstStage(u, false), now)
	deadline := now.Add(p.opts.ConnectTimeout)
	p.connDeadline = deadline
	p.armAt(&p.connWin, now, deadline)
	return deadline
}

// closeConnectWindow ends what openConnectWindow began when err came from
// the window's deadline before its timer fired: the window closes now, as
// the timer would have closed it.
func (p *run) closeConnectWindow(err error, deadline time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil && !time.Now().Before(deadline) && !p.stopped {
		p.noteWindow()
		p.end(p.connWin.err())
	}
}
