package drain

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
	input "github.com/healthctl/healthctl/internal/target"
)

// stalledLoop is an event-loop server that has been starved: it handles
// its connections one at a time in the order they were accepted, and
// reads nothing until stall has passed since the first one. It answers
// /ready at once when it reads it, and holds every other request.
type stalledLoop struct {
	l     net.Listener
	stall time.Duration
	mu    sync.Mutex
	read  []string // the paths read, in order
}

func (s *stalledLoop) serve() {
	conns := make(chan net.Conn, 16)
	go func() {
		defer close(conns)
		for {
			c, err := s.l.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	var until time.Time
	for c := range conns {
		if until.IsZero() {
			until = time.Now().Add(s.stall)
		}
		time.Sleep(time.Until(until))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			c.Close()
			continue
		}
		path := strings.Fields(line + " x x")[1]
		s.mu.Lock()
		s.read = append(s.read, path)
		s.mu.Unlock()
		if path == "/ready" {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nready\n"))
			c.Close()
		}
		// Anything else is held (in flight) until the listener closes.
		defer c.Close()
	}
}

func (s *stalledLoop) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.read...)
}

// TestInflightSettleWaitsForTheServer: the in-flight requests are in flight
// at the signal only once the server has read them. A server whose loop
// is stalled 400 ms (longer than the fixed 150 ms wait) has read both
// when settle returns, because the readiness request made after them was
// answered after them.
func TestInflightSettleWaitsForTheServer(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stalledLoop{l: l, stall: 400 * time.Millisecond}
	go s.serve()
	defer l.Close()
	base := "http://" + l.Addr().String()
	none := func(*input.Input) {}
	slow, ready := optionsFor(t, base+"/slow", none), optionsFor(t, base+"/ready", none)

	start := time.Now()
	in := startInflight(Config{Inflight: 2}, slow)
	defer in.cancel()
	in.settle(func() { poll(context.Background(), ready, evidence.Ready) })
	took := time.Since(start)
	got := s.paths()
	// The first /slow is the baseline (held: no answer within its window).
	if n := strings.Count(strings.Join(got, " "), "/slow"); n != 3 {
		t.Errorf("settle returned after %v with the server having read %q: want the baseline and both /slow requests read", took, got)
	}
	if took > 7*time.Second {
		t.Errorf("settle took %v: want it bounded (the baseline's 1 s window, then the barrier poll's 1 s window past the writes)", took)
	}

	// No in-flight requests: nothing to wait for.
	start = time.Now()
	(&inflight{}).settle(func() { t.Error("a barrier without in-flight requests") })
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("settle without in-flight requests took %v", d)
	}
}
