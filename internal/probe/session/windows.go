package session

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
	"github.com/healthctl/healthctl/internal/probe/result"
)

// WindowError is the cause a probe's own window cancels its context with.
type WindowError struct {
	Flag  string
	Limit time.Duration
}

func (w *WindowError) Error() string { return fmt.Sprintf("%s %s", w.Flag, w.Limit) }

// MaxTimeBackstop is how long after --max-time's timer the probe's context
// deadline falls.
const MaxTimeBackstop = 50 * time.Millisecond

// Deadlined is a context that reports a deadline (at, or its parent's when
// that is earlier) without a timer of its own: the windows' timer cancels
// the parent when the window closes. What takes the deadline from the
// context (a connect's wait, a lookup's queries) ends at it whatever the
// timer does. A sweep makes one probe a target, and a timer, context and
// channel for each of two deadlines were a tenth of its allocations. The
// parent is a cancel context: Done, Err, Value and context.Cause are its
// own, so a child of deadlined attaches to it directly.
type Deadlined struct {
	context.Context
	at time.Time
	// done is the parent's Done, read once: a connect, a read and every
	// select of the probe ask for it, and a cancel context's never changes.
	done <-chan struct{}
}

func NewDeadlined(parent context.Context, at time.Time) Deadlined {
	return Deadlined{parent, at, parent.Done()}
}

func (c *Deadlined) Done() <-chan struct{} { return c.done }

func (c *Deadlined) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.at) {
		return d, true
	}
	return c.at, true
}

// Window is one of the probe's three windows. A window that closes after it
// was disarmed, re-armed or after the probe stopped its timers counts for
// nothing: gen, active and due are checked under run.mu when the timer
// fires.
type Window struct {
	Cause WindowError
	Due   time.Time // when it closes, while active
	Gen   int
	// Active: armed and not yet disarmed.
	Active bool
}

// Err is the cause the window cancels the probe with (its identity: a
// cause is known to be a window's by its type).
func (w *Window) Err() *WindowError { return &w.Cause }

// windows are the probe's three windows (connect, read, max-time) and what
// the first one to close saw. Guarded by run.mu.
type windows struct {
	Cancel  context.CancelCauseFunc
	Stopped bool
	// Closer is its worker's closer when the probe holds it (nil when
	// not): no registration of its own closes its connections when a
	// window ends it (end does), and the windows' timer is the closer's.
	Closer *closer
	// Timer is the one timer of the three windows, set for the earliest
	// to close (timerAt, zero when it is not known to be set). A window
	// disarmed leaves it set: when it fires with no window due it sets
	// itself for the next. A sweep makes one probe a target, so one timer
	// a probe instead of one a window is a third of its timers.
	Timer   *time.Timer
	timerAt time.Time
	ConnWin Window
	ReadWin Window
	MaxWin  Window
	// ConnDeadline is when the connect window of the current hop closes.
	ConnDeadline time.Time
	// windowStage and windowAddr are the stage running and the address
	// dialled when a window closed ("" before).
	windowStage classify.Stage
	windowAddr  string
	// windowThroughProxy: the read window closed on a forward proxy.
	windowThroughProxy bool
	// overdue is the window that was due, its timer not yet run, when
	// the timers stopped (nil when none was): a starved timer goroutine
	// lets the deadline the window set end the exchange first.
	overdue *Window
	// HopEnd, when set, is what the connect and read windows close in
	// place of the probe: the attempt on one host of several that is
	// not the last (libpq's connect_timeout, per host), whose windows
	// give way to the next host while --max-time lasts. hopWindow is
	// the window that closed it (nil while none did).
	HopEnd    context.CancelCauseFunc
	HopWindow *Window
}

// Arm starts (or restarts) a window with p.Mu held: it closes d from now.
func (p *Probe) Arm(w *Window, d time.Duration) {
	now := time.Now()
	p.ArmAt(w, now, now.Add(d))
}

// ArmAt is arm for a window that closes at due, now being now: a probe
// reads the clock once for a stage it enters and the window it arms.
func (p *Probe) ArmAt(w *Window, now, due time.Time) {
	w.Gen++
	w.Active = true
	w.Due = due
	p.setTimer(now, due)
}

// setTimer makes the windows' timer fire at or before at (p.Mu held).
func (p *Probe) setTimer(now, at time.Time) {
	switch {
	case p.Stopped, p.Hooks.StarvedTimer:
	case p.Timer == nil && p.Closer != nil:
		// The worker's timer, shared by its probes one after another:
		// one a worker, not one a probe (closer.tick).
		p.timerAt = at
		p.Timer = p.Closer.Arm(at.Sub(now))
	case p.Timer == nil:
		p.timerAt = at
		p.Timer = time.AfterFunc(at.Sub(now), p.tick)
	case p.timerAt.IsZero() || at.Before(p.timerAt):
		p.timerAt = at
		p.Timer.Reset(at.Sub(now))
	}
}

// Disarm stops a window with p.Mu held; the timer, when it fires, finds it
// inactive.
func (p *Probe) Disarm(w *Window) {
	w.Gen++
	w.Active = false
}

// tick is the windows' timer: it closes the earliest window that is due,
// else sets itself for the next one to close.
func (p *Probe) tick() {
	defer crash.Recover() // runs on a timer's goroutine
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.timerAt = time.Time{}
	if p.Stopped {
		return
	}
	now := time.Now()
	var due, next *Window
	for _, w := range [...]*Window{&p.ConnWin, &p.ReadWin, &p.MaxWin} {
		switch {
		case !w.Active:
		case !w.Due.After(now):
			if due == nil || w.Due.Before(due.Due) {
				due = w
			}
		case next == nil || w.Due.Before(next.Due):
			next = w
		}
	}
	if due != nil {
		p.closeWindow(due)
		return
	}
	if next != nil {
		p.setTimer(now, next.Due)
	}
}

// closeWindow ends the probe because w closed, remembering the stage that
// was running at that moment (p.Mu held). It cancels under the lock, so no
// stage can begin between the stage noted and the cancellation (cancel
// only closes channels and starts goroutines: it never calls back into the
// hooks that take p.Mu).
func (p *Probe) closeWindow(w *Window) {
	if p.HopEnd != nil && w != &p.MaxWin {
		p.closeHop(w)
		return
	}
	p.NoteWindow()
	p.End(w.Err())
}

// closeHop ends the attempt on one host of several because w closed
// (p.Mu held): its context is cancelled and the connections made so far
// closed (the earlier hosts' are already), and the timer is set for
// --max-time, which still bounds the next host.
func (p *Probe) closeHop(w *Window) {
	p.HopWindow = w
	p.HopEnd(w.Err())
	p.HopEnd = nil
	p.Disarm(&p.ConnWin)
	p.Disarm(&p.ReadWin)
	cs := append([]net.Conn(nil), p.conns...)
	crash.Go(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	if p.MaxWin.Active {
		p.setTimer(time.Now(), p.MaxWin.Due)
	}
}

// End ends the probe with cause (p.Mu held): it cancels the probe's
// context, and closes its connections as the probe's own registration on
// the context would (on a goroutine of their own: closeConns takes p.Mu)
// when the probe holds its worker's closer instead.
func (p *Probe) End(cause error) {
	p.Cancel(cause)
	if p.Closer != nil {
		crash.Go(p.closeConns)
	}
}

// NoteWindow remembers the stage and address of the first window to close
// (p.Mu held).
func (p *Probe) NoteWindow() {
	if p.windowStage == "" {
		p.windowStage, p.windowAddr = p.Stage, p.Address
	}
}

// stopTimers stops every window; from now on none can count.
func (p *Probe) stopTimers() {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	now := time.Now()
	for _, w := range [...]*Window{&p.ConnWin, &p.ReadWin, &p.MaxWin} {
		if w.Active && !w.Due.After(now) && (p.overdue == nil || w.Due.Before(p.overdue.Due)) {
			p.overdue = w
		}
	}
	p.Stopped = true
	p.Disarm(&p.ConnWin)
	p.Disarm(&p.ReadWin)
	p.Disarm(&p.MaxWin)
	if p.Timer != nil {
		p.Timer.Stop()
	}
}

// windowed adjusts the observation when one of the probe's windows ended it
// (cause is the probe context's cause; p.Mu held), and returns the error
// the probe reports. answered says the response headers had arrived.
func (p *Probe) windowed(err, cause error, answered bool, obs *classify.Observation, f *classify.Facts, res *result.Result) error {
	if err == nil {
		return nil
	}
	var win *WindowError // on the heap (errors.As): declared past the common return
	if !errors.As(cause, &win) {
		if p.overdue == nil || !deadlineErr(err) {
			return err
		}
		// The deadline a window set ended the exchange before the
		// window's timer ran (a loaded machine starves timers): the
		// window closed all the same, and the sentence says which.
		win = p.overdue.Err()
	}
	if p.windowStage == classify.StageConnect && p.dialErr != nil {
		// The window closed on one address while another had answered
		// for itself (refused, unreachable): that answer is the probe's.
		obs.Stage = classify.StageConnect
		res.Address, res.IPFamily = p.Address, p.Family
		return p.dialErr
	}
	// A window counts only when it ended the probe with an error.
	obs.WindowClosed = true
	// The deadline may have closed it before the timer did.
	p.NoteWindow()
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
	if obs.Stage == classify.StageProxy && p.Forward {
		// A forward proxy that says nothing may be waiting for the
		// server behind it: a timeout, like the server's own.
		obs.Stage = classify.StageHeaders
		p.windowThroughProxy = true
	}
	p.windowStage = obs.Stage
	res.Address = p.windowAddr
	f.WindowFlag, f.WindowLimit = win.Flag, win.Limit
	f.Address = p.windowAddr
	f.ThroughProxy = p.windowThroughProxy
	return err
}

// deadlineErr says err is a deadline's: a connection's (i/o timeout) or a
// context's.
func deadlineErr(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
}

// BodyRead ends the body stage of an exchange: the transfer phase (from the
// first byte to now) is recorded, and a body read without error leaves the
// probe done, so no window that closes from here on counts.
func (p *Probe) BodyRead(err error) {
	end := time.Now()
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if !p.FirstByte.IsZero() {
		p.Record(result.PhaseTransfer, end.Sub(p.FirstByte))
	}
	if err == nil {
		p.Stage = classify.StageDone
	}
}

// OpenConnectWindow starts a connectionless exchange (dns:// over UDP,
// icmp://) toward u: its first stage entered and the connect window armed,
// as the dialler does for a connection. It returns the window's deadline
// for closeConnectWindow.
func (p *Probe) OpenConnectWindow(u *url.URL) time.Time {
	now := time.Now()
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.HopURL, p.ServerName = u, u.Hostname()
	p.EnterAt(p.FirstStage(u, false), now)
	deadline := now.Add(p.Opts.ConnectTimeout)
	p.ConnDeadline = deadline
	p.ArmAt(&p.ConnWin, now, deadline)
	return deadline
}

// CloseConnectWindow ends what openConnectWindow began when err came from
// the window's deadline before its timer fired: the window closes now, as
// the timer would have closed it.
func (p *Probe) CloseConnectWindow(err error, deadline time.Time) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if err != nil && !time.Now().Before(deadline) && !p.Stopped {
		p.NoteWindow()
		p.End(p.ConnWin.Err())
	}
}

// Fire closes a window now, as the windows' timer would when it is due,
// unless it was stopped or re-armed since gen: the test seam for a window
// that closes at a chosen moment (the exchanges' tests, through a hook).
func (p *Probe) Fire(w *Window, gen int) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if p.Stopped || !w.Active || w.Gen != gen {
		return
	}
	p.closeWindow(w)
}
