// Command healthctl probes HTTP health endpoints and says why they fail.
package main

import "os"

func main() {
	growStack()
	os.Exit(Main())
}

// growStack grows the main goroutine's stack from the runtime's 2 KiB to
// 16 KiB, the most a probe needs, in one copy while the stack is one frame
// deep. Left alone it doubles three times (4, 8, 16 KiB) deep in Cobra's
// call chain, and each copy walks every frame's stack map: ~0.08 ms of
// every start, a fifth of a probe's time above the design floor
// (docs/benchmarks.md).
//
//go:noinline
func growStack() {
	var frame [12 << 10]byte
	keepFrame(&frame)
}

// keepFrame makes growStack's frame real (the compiler drops an unused
// array).
//
//go:noinline
func keepFrame(*[12 << 10]byte) {}
