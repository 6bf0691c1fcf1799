// Package shutdown is the arithmetic of a graceful stop that drain-test's
// experiment and its lint share: the platforms' default grace periods, the
// margin kept before SIGKILL, and the settings a service with pre-drain P
// and shutdown timeout S needs. It is pure.
package shutdown

import (
	"math"
	"time"
)

// Platform defaults and the margin the formulas keep.
const (
	// DefaultTerminationGrace is Kubernetes' terminationGracePeriodSeconds.
	DefaultTerminationGrace = 30 * time.Second
	// DefaultStopGrace is Compose's stop_grace_period.
	DefaultStopGrace = 10 * time.Second
	// Margin is kept between S (plus preStop) and the platform's kill: the
	// process must be reaped before SIGKILL comes, not at the same instant.
	Margin = time.Second
)

// PreStopSeconds is the preStop sleep, in whole seconds, that covers a
// pre-drain of p (preStop sleep >= PRE_DRAIN_MS): the pod must stay routed
// for as long as the service still serves.
func PreStopSeconds(p time.Duration) int { return ceil(p) }

// GraceSeconds is the terminationGracePeriodSeconds a pod needs when its
// preStop takes preStop and the service's shutdown timeout is s: the grace
// clock starts before preStop, and SIGKILL must come only after the process
// is gone (preStop + S + Margin).
func GraceSeconds(preStop, s time.Duration) int { return ceil(preStop + s + Margin) }

// StopGraceSeconds is the stop_grace_period, in whole seconds, a Compose
// service with shutdown timeout s needs (S + Margin).
func StopGraceSeconds(s time.Duration) int { return ceil(s + Margin) }

// ceil is d in whole seconds, rounded up.
func ceil(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
