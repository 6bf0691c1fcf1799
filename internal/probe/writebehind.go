package probe

import (
	"net"
	"sync"
)

// writeBehind is a connection whose writes never block the writer: what a
// write hands over is queued and a goroutine of its own writes it out. The
// dialler gives it to every probe with a request body, so that a server
// refusing an upload it will not read (a 413, a 401) is heard: its answer
// is read while the body waits. Without it, the plain exchange writes the
// whole request before it reads, and net/http's HTTP/2 client writes a DATA
// frame and flushes it under the connection's write lock, which its reader
// takes to ack a SETTINGS frame or answer a PING: either way, once the body
// filled the TCP buffers of a server that stopped reading, the probe would
// report headers_timeout for a server that did answer.
//
// The queue holds at most what the writer hands over: the request (its
// body is already in memory) and HTTP/2's small frames. Bytes count as
// written when queued, as they do when they sit in the kernel's send
// buffer. Close closes the connection underneath, which ends a write the
// goroutine has blocked in; a write error is kept and returned by every
// later Write. No goroutine outlives a Close: the writer ends when its
// queue is empty or its write fails.
type writeBehind struct {
	net.Conn
	mu      sync.Mutex
	queue   []byte
	writing bool
	err     error
}

func newWriteBehind(c net.Conn) *writeBehind { return &writeBehind{Conn: c} }

// Write queues b (copied) and returns at once, or returns the error an
// earlier write met.
func (w *writeBehind) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	w.queue = append(w.queue, b...)
	if !w.writing {
		w.writing = true
		go w.drain()
	}
	return len(b), nil
}

// drain writes the queue out until it is empty or a write fails.
func (w *writeBehind) drain() {
	var buf []byte
	for {
		w.mu.Lock()
		if len(w.queue) == 0 || w.err != nil {
			w.writing = false
			w.mu.Unlock()
			return
		}
		// Swap the buffers: Write appends to the spare while this one is
		// written.
		buf, w.queue = w.queue, buf[:0]
		w.mu.Unlock()
		if _, err := w.Conn.Write(buf); err != nil {
			w.mu.Lock()
			w.err = err
			w.queue = nil
			w.writing = false
			w.mu.Unlock()
			return
		}
	}
}
