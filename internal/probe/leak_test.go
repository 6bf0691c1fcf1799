package probe_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when any goroutine outlives its tests: every
// fault of the matrix (TestReasonsFromRealServers: refusals, resets, hangs,
// TLS failures, windows closing mid-phase, cancellation) must leave no
// dial, handshake, body reader or timer goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
