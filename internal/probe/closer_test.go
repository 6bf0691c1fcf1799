package probe

import (
	"context"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture"
)

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
		if p.Closer == nil || p.Timer == nil || p.Timer != p.Closer.Timer {
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
	if p.Closer != nil || p.Timer == nil {
		t.Error("a probe without the closer did not make a timer of its own")
	}
}
