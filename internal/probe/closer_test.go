package probe

import (
	"context"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture"
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
	a, b := &run{}, &run{}
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

// TestCloserTimer: the probes of one worker share its closer's timer, one
// after another. Each one's windows close on it (a hung server: the read
// window, then again for the next probe), a pass between them is not cut
// short by a fire meant for the probe before it, and a probe that does
// not hold the closer keeps a timer of its own.
func TestCloserTimer(t *testing.T) {
	hang, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Mode: fixture.ModeHang})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cctx, release := WithCloser(context.Background())
	defer release()
	for i, c := range []struct {
		url  string
		want classify.Reason
	}{{hang.URL, classify.HeadersTimeout}, {ok.URL, classify.OK}, {hang.URL, classify.HeadersTimeout}, {ok.URL, classify.OK}} {
		o := testOptions(t, c.url+"/health", "")
		o.ReadTimeout = 200 * time.Millisecond
		p := newRun(o, hooks{})
		r := p.do(cctx)
		if r.Reason != c.want {
			t.Errorf("probe %d: %s (%q), want %s", i, r.Reason, r.Error, c.want)
		}
		if p.closer == nil || p.timer == nil || p.timer != p.closer.timer {
			t.Errorf("probe %d: did not run on the closer's timer", i)
		}
	}
	// Not under exactly the closer's context: a timer of its own.
	derived, stop := context.WithCancel(cctx)
	defer stop()
	o := testOptions(t, hang.URL+"/health", "")
	o.ReadTimeout = 200 * time.Millisecond
	p := newRun(o, hooks{})
	if r := p.do(derived); r.Reason != classify.HeadersTimeout {
		t.Errorf("own timer: %s (%q), want headers_timeout", r.Reason, r.Error)
	}
	if p.closer != nil || p.timer == nil {
		t.Error("a probe without the closer did not make a timer of its own")
	}
}
