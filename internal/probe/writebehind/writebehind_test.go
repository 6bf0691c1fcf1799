package writebehind

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// TestWriteBehind: writes return at once even when nothing reads, the bytes
// come out in order, a failed write is returned by every later Write, and
// no goroutine is left once the connection is closed.
func TestWriteBehind(t *testing.T) {
	before := runtime.NumGoroutine()
	a, b := net.Pipe() // a write blocks until the other end reads
	w := New(a)
	var want bytes.Buffer
	for i := range 100 {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, 1000+i)
		want.Write(p)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if n, err := w.Write(p); n != len(p) || err != nil {
				t.Errorf("write %d: %d, %v", i, n, err)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("write %d blocked with nothing reading", i)
		}
	}
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("the bytes read are not the bytes written, in order")
	}

	w.Write([]byte("stuck")) // nothing reads it: the writer blocks in the pipe
	w.Close()
	var err error
	for deadline := time.Now().Add(10 * time.Second); err == nil && time.Now().Before(deadline); {
		_, err = w.Write([]byte("x"))
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		t.Fatal("writes still accepted 10 s after Close")
	}
	if _, again := w.Write([]byte("y")); again != err {
		t.Errorf("a later write: %v, want the first error %v", again, err)
	}
	b.Close()
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine() - before; n > 0 {
		t.Errorf("%d goroutines left after Close", n)
	}
}

// TestWriteBehindRoom: waitRoom returns while the queue has room, waits
// while maxQueued bytes are unwritten, and returns after a write failed
// only once the connection is closed.
func TestWriteBehindRoom(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	w := New(a)
	w.WaitRoom() // empty: at once
	w.Write(make([]byte, maxQueued))
	waited := make(chan struct{})
	go func() { w.WaitRoom(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("waitRoom returned with the queue full and nothing reading")
	case <-time.After(50 * time.Millisecond):
	}
	io.CopyN(io.Discard, b, maxQueued) // the writer empties the queue
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("waitRoom still waiting 10 s after the queue was written")
	}

	b.Close() // the next write fails
	w.Write([]byte("x"))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		w.mu.Lock()
		failed := w.err != nil
		w.mu.Unlock()
		if failed {
			break
		}
	}
	waited = make(chan struct{})
	go func() { w.WaitRoom(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("waitRoom returned after a failed write, before Close")
	case <-time.After(50 * time.Millisecond):
	}
	w.Close()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("waitRoom still waiting 10 s after Close")
	}
}
