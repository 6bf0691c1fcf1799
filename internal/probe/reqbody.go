package probe

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/healthctl/healthctl/internal/inputfile"
)

// The request body (--data) has two sources, one way to send them: Body,
// bytes in memory (-d TEXT, -d @- read once), or BodyFile, a file (-d
// @FILE) opened for each request — every probe, every wait-healthy attempt,
// every 307/308 hop (http.Request.GetBody), every drain-test request — and
// streamed from it with BodySize as its Content-Length, so memory stays
// bounded whatever its size.

// HasBody reports whether o sends a request body (possibly empty).
func (o *Options) HasBody() bool { return o.Body != nil || o.BodyFile != "" }

// bodyLen is the request body's length.
func (o *Options) bodyLen() int64 {
	if o.BodyFile != "" {
		return o.BodySize
	}
	return int64(len(o.Body))
}

// setBody gives req o's body: its reader, Content-Length and GetBody (for
// a redirect that repeats it). An empty body is http.NoBody.
func (o *Options) setBody(req *http.Request) {
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
type fileBody struct {
	path string
	size int64
	f    *os.File
	r    io.Reader
	err  error
}

func (b *fileBody) Read(p []byte) (int, error) {
	if b.r == nil && b.err == nil {
		b.open()
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.r.Read(p)
}

func (b *fileBody) open() {
	f, fi, err := inputfile.Open(b.path, inputfile.Body)
	if err != nil {
		b.err = err
		return
	}
	if fi.Size() != b.size {
		f.Close()
		b.err = fmt.Errorf("data file %s: %d bytes now, %d when healthctl started: it changed while in use", b.path, fi.Size(), b.size)
		return
	}
	b.f, b.r = f, io.LimitReader(f, b.size)
}

func (b *fileBody) Close() error {
	if b.err == nil && b.f == nil {
		b.err = os.ErrClosed
	}
	if b.f != nil {
		f := b.f
		b.f, b.r, b.err = nil, nil, os.ErrClosed
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
	p *run
}

func (c countedBody) Read(b []byte) (int, error) {
	c.p.mu.Lock()
	wb := c.p.wb
	c.p.mu.Unlock()
	if wb != nil {
		wb.waitRoom()
	}
	n, err := c.ReadCloser.Read(b)
	c.p.bodyHanded.Add(int64(n))
	return n, err
}

// countBody makes req's body (and the bodies GetBody gives a redirect)
// count into p.bodyHanded, from zero for each.
func (p *run) countBody(req *http.Request) {
	if req.Body == nil || req.Body == http.NoBody {
		return
	}
	p.bodyHanded.Store(0)
	req.Body = countedBody{req.Body, p}
	if get := req.GetBody; get != nil {
		req.GetBody = func() (io.ReadCloser, error) {
			b, err := get()
			if err != nil || b == http.NoBody {
				return b, err
			}
			p.bodyHanded.Store(0)
			return countedBody{b, p}, nil
		}
	}
}

// bodyUnsent reports, for a probe with a request body, whether the body
// has not all gone out to the kernel — the server stopped reading it —
// and how many of its bytes did (p.mu held). The bytes handed to the
// connection and not yet written (writeBehind's queue) are not counted as
// sent; the Transport's own write buffer (4 KiB) may be.
func (p *run) bodyUnsent() (sent, size int64, unsent bool) {
	size = p.opts.bodyLen()
	if size == 0 {
		return 0, 0, false
	}
	handed := p.bodyHanded.Load()
	var queued int64
	if p.wb != nil {
		queued = p.wb.pending()
	}
	sent = max(handed-queued, 0)
	return sent, size, handed < size || queued > 0
}
