package watch

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when any goroutine outlives its tests: sweeps,
// skipped in-flight probes, hooks (killed by their timeout) and cancelled
// runs must all have ended.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
