package httpprobe

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"

	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

// The request body (--data) has two sources, one way to send them: Body,
// bytes in memory (-d TEXT, -d @- read once), or BodyFile, a file (-d
// @FILE) opened for each request — every probe, every wait-healthy attempt,
// every 307/308 hop (http.Request.GetBody), every drain-test request — and
// streamed from it with BodySize as its Content-Length, so memory stays
// bounded whatever its size.

// setBody gives req o's body: its reader, Content-Length and GetBody (for
// a redirect that repeats it). An empty body is http.NoBody.
func setBody(o *scheme.Options, req *http.Request) {
	if !o.HasBody() {
		return
	}
	if o.BodyFile == "" {
		data := o.Body
		req.ContentLength = int64(len(data))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	} else {
		path, size := o.BodyFile, o.BodySize
		req.ContentLength = size
		req.GetBody = func() (io.ReadCloser, error) { return &fileBody{path: path, size: size}, nil }
	}
	if req.ContentLength == 0 {
		req.Body = http.NoBody
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
		return
	}
	req.Body, _ = req.GetBody()
}

// fileBody is -d @FILE's body for one request: the file is opened on the
// first read (a request built and never sent holds no descriptor) and read
// as the connection takes it, never more than size bytes; a file whose size
// changed since it was checked is an error, not a body of another length.
//
// Read and Close may run at once: net/http's Transport closes a request's
// body from a goroutine of its own when the request is cancelled (HTTP/2's
// closeReqBodyLocked) while its body writer may be in a Read, and may
// keep reading a body after RoundTrip returned. mu guards the state both
// touch; the file's own Read runs outside it (an *os.File is safe to
// close under a read, which then fails), so a Close never waits for more
// than an open of a regular file. Once closed, a body is never opened
// again: a new request body is GetBody's new fileBody.
type fileBody struct {
	path string
	size int64

	mu sync.Mutex
	f  *os.File
	// err is kept: the open's error, or os.ErrClosed once closed.
	err error
	// left is how many bytes Read has still to give (Read's alone: an
	// io.Reader has one reader at a time).
	left int64
}

func (b *fileBody) Read(p []byte) (int, error) {
	f, err := b.file()
	if err != nil {
		return 0, err
	}
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := f.Read(p)
	b.left -= int64(n)
	if err == io.EOF && b.left > 0 {
		err = fmt.Errorf("data file %s: ended %d bytes short of its %d: it changed while in use", b.path, b.left, b.size)
	}
	return n, err
}

// file opens the file on the first call and returns it, or the error that
// ends the body (the open's, or os.ErrClosed after Close).
func (b *fileBody) file() (*os.File, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f != nil || b.err != nil {
		return b.f, b.err
	}
	f, fi, err := inputfile.Open(b.path, inputfile.Body)
	if err != nil {
		b.err = err
		return nil, err
	}
	if fi.Size() != b.size {
		f.Close()
		b.err = fmt.Errorf("data file %s: %d bytes now, %d when healthctl started: it changed while in use", b.path, fi.Size(), b.size)
		return nil, b.err
	}
	b.f, b.left = f, b.size
	return f, nil
}

// Close closes the file if it was opened; a Read after it, or in progress
// at it, fails.
func (b *fileBody) Close() error {
	b.mu.Lock()
	f := b.f
	b.f = nil
	if b.err == nil {
		b.err = os.ErrClosed
	}
	b.mu.Unlock()
	if f != nil {
		return f.Close()
	}
	return nil
}

// countedBody counts what a request body hands to the connection, for the
// run's account of a body the server never read (bodyUnsent).
// It reads on only while the connection has room (writeBehind.waitRoom):
// what it hands over waits in memory, and a server that never reads would
// otherwise have the whole file queued.
type countedBody struct {
	io.ReadCloser
	p *session.Probe
	n *atomic.Int64
}

func (c countedBody) Read(b []byte) (int, error) {
	c.p.Mu.Lock()
	wb := c.p.Wb
	c.p.Mu.Unlock()
	if wb != nil {
		wb.WaitRoom()
	}
	n, err := c.ReadCloser.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// countBody makes req's body (and the bodies GetBody gives a redirect or
// a retry) count into a counter of its own, from zero, which becomes
// p.bodyHanded.
func countBody(p *session.Probe, req *http.Request) {
	if req.Body == nil || req.Body == http.NoBody {
		return
	}
	req.Body = counted(p, req.Body)
	if get := req.GetBody; get != nil {
		req.GetBody = func() (io.ReadCloser, error) {
			b, err := get()
			if err != nil || b == http.NoBody {
				return b, err
			}
			return counted(p, b), nil
		}
	}
}

// counted is b counting into a new p.bodyHanded.
func counted(p *session.Probe, b io.ReadCloser) countedBody {
	n := new(atomic.Int64)
	p.Mu.Lock()
	p.BodyHanded = n
	p.Mu.Unlock()
	return countedBody{b, p, n}
}
