package probe

import (
	"context"

	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

// RunAfterExchange is Run with a hook that runs between the exchange's
// return and the making of its result.
func RunAfterExchange(ctx context.Context, opts *scheme.Options, f func()) Result {
	return newRun(opts, hooks{AfterExchange: f}).do(ctx)
}

// hooks are session's test seams, as the tests here name them.
type hooks = session.Hooks

// testRun is one probe the tests prepare with hooks (newRun) and run with
// the exchange of its URL's row, as Run does (do).
type testRun struct{ *session.Probe }

func newRun(o *scheme.Options, h hooks) testRun { return testRun{session.New(o, h)} }

func (r testRun) do(ctx context.Context) Result {
	return r.Do(ctx, exchangeFor(r.Opts.URL.Scheme))
}
