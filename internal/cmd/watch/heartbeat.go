package watchcmd

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/version"
	"github.com/healthctl/healthctl/internal/watch"
)

// heartbeat pings --heartbeat after each completed sweep (watch.Heartbeat):
// the failure form when a target failed or the state or metrics could not
// be written. A sweep cut short by a signal sends nothing. With --once the
// ping is sent before the run exits; a long-running watch sends it in the
// background, one at a time (a sweep that ends while the last ping is
// still out sends none: the next one says the same). Its trouble is one
// line on stderr, never the sweep's failure, and never names the URL.
type heartbeat struct {
	hb   *watch.Heartbeat
	src  string
	mu   sync.Mutex
	busy bool
	wg   sync.WaitGroup
}

// newHeartbeat is the --heartbeat of opts (nil without one).
func newHeartbeat(opts *Options, u *url.URL) *heartbeat {
	if u == nil {
		return nil
	}
	return &heartbeat{
		hb:  &watch.Heartbeat{URL: u, Timeout: opts.HeartbeatTimeout, UserAgent: "healthctl/" + version.String()},
		src: opts.source("heartbeat"),
	}
}

// after pings for sweep s, whose report ended with reportErr.
func (h *heartbeat) after(ctx context.Context, f *cli.Factory, s *watch.Sweep, reportErr error, wait bool) {
	if h == nil || s.Interrupted || ctx.Err() != nil {
		return
	}
	failed := s.Fail > 0 || reportErr != nil
	msg := sweepLine(s)
	ping := func() {
		if err := h.hb.Ping(ctx, failed, msg); err != nil {
			fmt.Fprintf(f.Streams.Err, "healthctl: watch: %s: heartbeat not sent: %s\n", h.src, cli.OneLine(err.Error()))
		}
	}
	if wait {
		ping()
		return
	}
	h.mu.Lock()
	if h.busy {
		h.mu.Unlock()
		return
	}
	h.busy = true
	h.mu.Unlock()
	h.wg.Go(func() {
		defer crash.Recover()
		defer func() { h.mu.Lock(); h.busy = false; h.mu.Unlock() }()
		ping()
	})
}

// wait waits for a ping still out (its own timeout bounds it).
func (h *heartbeat) wait() {
	if h != nil {
		h.wg.Wait()
	}
}
