package crash

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConcurrentPanicsReportOnce: two goroutines that panic at once give one
// line and one exit; the second waits while the first ends the process.
func TestConcurrentPanicsReportOnce(t *testing.T) {
	// A plain builder: with one report at a time, only the first panic's
	// goroutine writes before the test reads (after its exit).
	var out strings.Builder
	exited := make(chan int, 2)
	block := make(chan struct{})
	first := true
	var mu sync.Mutex
	oldOut, oldExit := Out, Exit
	Out = &out
	Exit = func(code int) {
		exited <- code
		mu.Lock()
		wasFirst := first
		first = false
		mu.Unlock()
		if wasFirst {
			<-block // the real os.Exit never returns
		}
	}
	t.Cleanup(func() {
		Out, Exit = oldOut, oldExit
	})
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			defer Recover()
			<-start
			panic("boom")
		})
	}
	close(start)
	if code := <-exited; code != ExitInternal {
		t.Fatalf("exit %d, want %d", code, ExitInternal)
	}
	// While the first exit is in progress (the real one never returns),
	// the other panic must neither print nor exit.
	select {
	case <-exited:
		t.Errorf("a second exit while the first was in progress")
	case <-time.After(300 * time.Millisecond):
	}
	got := out.String()
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, "internal error (a bug, please report it): boom") {
		t.Errorf("printed %q before the first exit, want one line", got)
	}
	close(block)
	wg.Wait()
}
