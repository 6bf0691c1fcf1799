package session

import (
	"context"
	"testing"
)

// TestCloserFor: a probe holds its worker's closer only under exactly the
// closer's context, only while no other probe holds it, and only while the
// context has not ended (its one registration may have fired already);
// otherwise it registers its own.
func TestCloserFor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cctx, release := WithCloser(ctx)
	defer release()
	a, b := &Probe{}, &Probe{}
	if closerFor(ctx, a) != nil {
		t.Fatal("held a closer under a context that has none")
	}
	derived, stop := context.WithCancel(cctx)
	defer stop()
	if closerFor(derived, a) != nil {
		t.Fatal("held the closer under a context derived from its own (whose end it does not see)")
	}
	c := closerFor(cctx, a)
	if c == nil {
		t.Fatal("a free closer not held")
	}
	if closerFor(cctx, b) != nil {
		t.Fatal("two probes held one closer")
	}
	c.release(b) // not b's: a keeps it
	if closerFor(cctx, b) != nil {
		t.Fatal("a release by a probe that did not hold it freed the closer")
	}
	c.release(a)
	if c2 := closerFor(cctx, b); c2 == nil {
		t.Fatal("a released closer not held again")
	} else {
		c2.release(b)
	}
	cancel()
	if closerFor(cctx, a) != nil {
		t.Fatal("held the closer of a context that has ended")
	}
	if c.cur != nil {
		t.Fatal("a closer refused for an ended context stays held")
	}
}
