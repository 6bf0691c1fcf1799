package heartbeat

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSenderDropsBehindASlowReceiver: a receiver slower than the sweeps
// makes the pings past the queue dropped, each said on one line naming the
// setting and never the URL; the queued ones are sent in order by Wait;
// nothing is sent after Wait, nor for an interrupted sweep.
func TestSenderDropsBehindASlowReceiver(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		mu.Lock()
		bodies = append(bodies, strings.TrimSpace(b.String()))
		mu.Unlock()
	}))
	defer srv.Close()
	u, err := Parse(srv.URL + "/ping/KEY-1")
	if err != nil {
		t.Fatal(err)
	}
	var errw bytes.Buffer
	ctx := context.Background()
	s := NewSender(ctx, &Pinger{URL: u, Timeout: 30 * time.Second}, "--heartbeat", false, false, &errw)
	s.After(ctx, 1, true, false, "sweep 1 (interrupted)", nil) // nothing
	s.Starting(1)                                              // --heartbeat-start not asked for: nothing
	for n := int64(2); n <= 7; n++ {
		// At most one in flight and queueLen waiting: the sixth is dropped.
		s.After(ctx, n, false, false, "sweep "+string(rune('0'+n)), nil)
	}
	close(release)
	s.Wait()
	s.After(ctx, 8, false, false, "sweep 8", nil) // after Wait: nothing
	out := errw.String()
	if !strings.Contains(out, "healthctl: watch: --heartbeat: success ping for sweep 7 dropped: 4 pings before it are still waiting") ||
		strings.Contains(out, "KEY-1") || strings.Count(out, "\n") != strings.Count(out, "dropped") {
		t.Errorf("stderr:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) < queueLen || len(bodies) > queueLen+1 || bodies[0] != "sweep 2" || bodies[len(bodies)-1] == "sweep 8" {
		t.Errorf("sent %q", bodies)
	}
	for i := 1; i < len(bodies); i++ {
		if bodies[i] <= bodies[i-1] {
			t.Errorf("out of order: %q", bodies)
		}
	}
}
