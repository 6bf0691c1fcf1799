package drain

import (
	"context"

	"github.com/healthctl/healthctl/internal/probe"
)

// proberKey carries Config.Prober to the health polls: they run deep in
// the experiment's goroutines, and the context already reaches each one.
type proberKey struct{}

// withProber makes the health polls under ctx go through p (nil: probe.Run).
func withProber(ctx context.Context, p probe.Prober) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, proberKey{}, p)
}

// proberOf is the prober the health polls under ctx use.
func proberOf(ctx context.Context) probe.Prober {
	if p, ok := ctx.Value(proberKey{}).(probe.Prober); ok {
		return p
	}
	return probe.Run
}
