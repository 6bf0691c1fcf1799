package httpprobe

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/probe/session"
)

// readChunk is the size of one read of the body.
const readChunk = 32 << 10

// readBufs holds readChunk-sized read buffers.
var readBufs = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// decodedBody is the body the conditions read: a gzip body (asked for with
// -H 'Accept-Encoding: gzip', which turns Go's own decoding off) is decoded,
// as curl's --compressed does. Any other encoding is returned as is, with
// its name, so the conditions can say why they cannot read it.
func decodedBody(resp *http.Response, conditions bool) (io.Reader, string) {
	ce := strings.ToLower(strings.TrimSpace(session.HeaderValue(resp.Header, "Content-Encoding")))
	if !conditions || resp.Uncompressed || ce == "" || ce == "identity" {
		return resp.Body, ""
	}
	if ce == "gzip" || ce == "x-gzip" {
		return &lazyGzip{src: resp.Body}, ""
	}
	return resp.Body, ce
}

// lazyGzip starts decoding on the first Read, so the gzip header is read
// in the body stage, under the read window, like any other byte.
type lazyGzip struct {
	src io.Reader
	zr  *gzip.Reader
}

func (l *lazyGzip) Read(b []byte) (int, error) {
	if l.zr == nil {
		zr, err := gzip.NewReader(l.src)
		if err != nil {
			return 0, err
		}
		l.zr = zr
	}
	return l.zr.Read(b)
}

// corruptGzip says err is a gzip stream that is not valid, not a read error.
func corruptGzip(err error) bool {
	var ce flate.CorruptInputError
	return errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.As(err, &ce)
}

// readBody reads the body up to max bytes, handing each chunk to the body
// conditions' scan as it goes. More than max bytes is truncation, not an
// error.
func readBody(r io.Reader, max int64, e *expect.Expectations) (expect.Body, error) {
	// The read buffer is reused across probes (watch runs thousands): it was
	// over half of a sweep's allocations. It goes back only after the regex
	// matchers have stopped (defers run last-in, first-out); a chunk handed
	// to them is consumed before their write returns (io.Pipe).
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	scan := e.NewScan()
	defer scan.Abort()
	buf := *bp
	var read int64
	var err error
	for read < max {
		n := int64(len(buf))
		if left := max - read; left < n {
			n = left
		}
		var got int
		got, err = r.Read(buf[:n])
		if got > 0 {
			read += int64(got)
			scan.Write(buf[:got])
		}
		if err != nil {
			break
		}
	}
	truncated := false
	if errors.Is(err, io.EOF) {
		err = nil
	} else if err == nil {
		// max bytes read: one more byte says whether there was more.
		var one [1]byte
		n, rerr := io.ReadFull(r, one[:])
		truncated = n > 0
		if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, io.ErrUnexpectedEOF) {
			err = rerr
		}
	}
	if err != nil {
		b := scan.Partial()
		b.Truncated = truncated
		return b, err
	}
	b := scan.Finish()
	b.Truncated = truncated
	return b, nil
}
