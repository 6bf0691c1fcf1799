package metrics

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func openFDs(t *testing.T) int {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(ents)
}

// TestListenBounded: 100 clients that connect and send nothing hold at most
// ListenConns of the server's descriptors (the rest wait in the kernel's
// queue); each is dropped by the header timeout, and a real scrape then
// gets its answer.
func TestListenBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int32
	srv := Server(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		io.WriteString(w, "probe_success 1\n")
	}))
	srv.ReadHeaderTimeout = 300 * time.Millisecond
	go srv.Serve(LimitListener(ln, ListenConns))
	defer srv.Close()

	before := openFDs(t)
	var idle []net.Conn
	for range 100 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond) // let the server accept what it will
	if grew := openFDs(t) - before - len(idle); grew > ListenConns+2 {
		t.Errorf("100 idle clients took %d server descriptors, want at most %d", grew, ListenConns)
	}
	// A scrape behind them: answered once the header timeout has freed
	// the slots (100 idle / 8 slots × 0.3 s ≈ 4 s).
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the scrape behind 100 idle clients: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "probe_success") {
		t.Fatalf("got %q", b)
	}
}
