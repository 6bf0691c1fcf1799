package session

import (
	"context"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/crash"
)

// A probe closes its connections when its context ends, whatever ends it:
// a window, or the caller's cancellation (Ctrl-C). For the caller's, a
// probe registers a closer with its context (context.AfterFunc), and
// removes it when it returns. A sweep's worker runs one probe after another
// on one context, and that registration and its removal were a few per
// cent of a target's CPU time: WithCloser makes one registration of the
// worker's, which closes the connections of the probe it is running.

type closerKey struct{}

// closer is one registration on a worker's context: when the context ends
// it closes the connections of the probe that holds it (at most one at a
// time; a probe that finds it held registers its own).
type closer struct {
	Ctx  context.Context // the context handed out: probes under exactly it
	Mu   sync.Mutex
	cur  *Probe
	stop func() bool
	// Timer is the windows' timer of the probes that hold the closer,
	// one after another (made by the first, reset by the others, stopped
	// by each as it stops its windows): a timer and its function a worker
	// instead of a probe. Only the holder touches it.
	Timer *time.Timer
}

// Arm sets the closer's timer to fire in d, and returns it.
func (c *closer) Arm(d time.Duration) *time.Timer {
	if c.Timer == nil {
		c.Timer = time.AfterFunc(d, c.tick)
	} else {
		c.Timer.Reset(d)
	}
	return c.Timer
}

// tick is the closer's timer: the windows' timer of the probe holding it.
// One that fires for a probe that has returned finds the next probe (its
// tick closes only a window that is due, else sets the timer for its next
// one) or none.
func (c *closer) tick() {
	defer crash.Recover() // runs on a timer's goroutine
	c.Mu.Lock()
	p := c.cur
	c.Mu.Unlock()
	if p != nil {
		p.tick()
	}
}

// WithCloser returns a context for running probes one after another, and
// its release (call it once they are done). A probe whose parent is exactly
// the returned context lets the context's one registration close its
// connections when the context ends; under any other context (one derived
// from it included) a probe registers its own.
func WithCloser(ctx context.Context) (context.Context, func()) {
	c := &closer{}
	c.Ctx = context.WithValue(ctx, closerKey{}, c)
	c.stop = context.AfterFunc(ctx, c.fire)
	return c.Ctx, func() {
		c.stop()
		c.Mu.Lock()
		if c.cur == nil && c.Timer != nil {
			c.Timer.Stop()
		}
		c.Mu.Unlock()
	}
}

// fire closes the connections of the probe holding the closer: its
// context has ended.
func (c *closer) fire() {
	c.Mu.Lock()
	p := c.cur
	c.Mu.Unlock()
	if p != nil {
		p.closeConns()
	}
}

// closerFor is the closer p may hold under parent: parent's own, when it is
// free and parent has not ended. Otherwise nil, and p registers its own.
func closerFor(parent context.Context, p *Probe) *closer {
	c, _ := parent.Value(closerKey{}).(*closer)
	if c == nil || c.Ctx != parent {
		return nil
	}
	c.Mu.Lock()
	if c.cur != nil {
		c.Mu.Unlock()
		return nil
	}
	c.cur = p
	c.Mu.Unlock()
	// Ended before p held it: fire may have run already, and found no
	// probe. (Ending after this, fire finds p: the context's error is set
	// before its AfterFunc starts.)
	if parent.Err() != nil {
		c.release(p)
		return nil
	}
	return c
}

// release lets the closer go once p has returned.
func (c *closer) release(p *Probe) {
	c.Mu.Lock()
	if c.cur == p {
		c.cur = nil
	}
	c.Mu.Unlock()
}
