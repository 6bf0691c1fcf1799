package probe

import (
	"context"

	"github.com/healthctl/healthctl/internal/scheme"
)

// RunAfterExchange is Run with a hook that runs between the exchange's
// return and the making of its result.
func RunAfterExchange(ctx context.Context, opts *scheme.Options, f func()) Result {
	return newRun(opts, hooks{afterExchange: f}).do(ctx)
}
