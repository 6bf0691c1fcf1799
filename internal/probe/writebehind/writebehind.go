package writebehind

import (
	"net"
	"sync"
)

// Conn is a connection whose writes never block the writer: what a
// write hands over is queued and a goroutine of its own writes it out. The
// dialler gives it to every probe with a request body, so that a server
// refusing an upload it will not read (a 413, a 401) is heard: its answer
// is read while the body waits. Without it, the HTTP/1.1 exchange writes the
// whole request before it reads, and net/http's HTTP/2 client writes a DATA
// frame and flushes it under the connection's write lock, which its reader
// takes to ack a SETTINGS frame or answer a PING: either way, once the body
// filled the TCP buffers of a server that stopped reading, the probe would
// report headers_timeout for a server that did answer.
//
// The queue holds what the writer hands over, and the request body is
// handed over only while less than maxQueued bytes are unwritten: its
// reader waits for room (waitRoom, from countedBody) before it reads more
// from its source. So a body streamed from a file (-d @FILE) costs at
// most about a megabyte against a server that never reads it, and the
// wait happens where no lock of net/http's is held — HTTP/2's writer reads
// the body before it takes the connection's write lock, so its reader can
// still ack a SETTINGS or answer a PING and hear a 413. Bytes count as
// written when queued, as they do when they sit in the kernel's send buffer. Close
// closes the connection underneath, which ends a write the goroutine has
// blocked in and wakes a waiting Write; a write error is kept and returned
// by every later Write. No goroutine outlives a Close: the writer ends when
// its queue is empty or its write fails.
type Conn struct {
	net.Conn
	mu    sync.Mutex
	room  sync.Cond // signalled when the queue shrinks or an error is kept
	queue []byte
	// inFlight is the length of the buffer the goroutine is writing.
	inFlight int
	writing  bool
	err      error
	closed   bool
}

// maxQueued bounds what a Conn holds unwritten.
const maxQueued = 1 << 20

func New(c net.Conn) *Conn {
	w := &Conn{Conn: c}
	w.room.L = &w.mu
	return w
}

// Write queues b (copied) and returns at once, or returns the error an
// earlier write met.
func (w *Conn) Write(b []byte) (int, error) {
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

// WaitRoom waits while maxQueued bytes or more are unwritten, until some
// are written or the connection is closed. Once a write has failed (the
// server reset a connection it answered without reading the body) it
// waits for the Close: the body's writer must not report that failure
// before the answer already on its way is read — net/http's Transport
// returns a write error that comes before the response instead of it —
// and the exchange, or the window, closes the connection when it is done.
func (w *Conn) WaitRoom() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for !w.closed && (w.err != nil || len(w.queue)+w.inFlight >= maxQueued) {
		w.room.Wait()
	}
}

// Pending is how many bytes were queued and not yet written.
func (w *Conn) Pending() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int64(len(w.queue) + w.inFlight)
}

// Close closes the connection underneath and wakes a waitRoom; later
// writes return net.ErrClosed unless a write error came first.
func (w *Conn) Close() error {
	err := w.Conn.Close()
	w.mu.Lock()
	w.closed = true
	if w.err == nil {
		w.err = net.ErrClosed
	}
	w.room.Broadcast()
	w.mu.Unlock()
	return err
}

// drain writes the queue out until it is empty or a write fails.
func (w *Conn) drain() {
	var buf []byte
	for {
		w.mu.Lock()
		if len(w.queue) == 0 || w.err != nil {
			w.queue = nil
			w.writing = false
			w.mu.Unlock()
			return
		}
		// Swap the buffers: Write appends to the spare while this one is
		// written.
		buf, w.queue = w.queue, buf[:0]
		w.inFlight = len(buf)
		w.room.Broadcast()
		w.mu.Unlock()
		_, err := w.Conn.Write(buf)
		w.mu.Lock()
		w.inFlight = 0
		w.room.Broadcast()
		if err != nil {
			if w.err == nil {
				w.err = err
			}
			w.queue = nil
			w.writing = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
	}
}
