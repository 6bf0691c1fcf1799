package probe

import (
	"context"

	"github.com/healthctl/healthctl/internal/scheme"
)

// Prober runs one probe: Run is the real one; tests hand a fake (or a
// panicking one) to every command through the factory. It must return
// promptly once ctx is done.
type Prober func(ctx context.Context, o *scheme.Options) Result
