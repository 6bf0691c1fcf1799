package probe

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/healthctl/healthctl/internal/crash"
)

// MaxJSONBody is the most of a body kept for --expect-json: a JSON document
// can only be checked whole, so a longer body fails the condition (saying
// so) instead of being held in memory. --expect-body and
// --expect-body-regex stream and hold no body at all.
const MaxJSONBody = 8 << 20

// readChunk is the size of one read of the body.
const readChunk = 32 << 10

// readBufs holds readChunk-sized read buffers.
var readBufs = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// bodyResult is what reading the body learned.
type bodyResult struct {
	// truncated is set when the body went on past --max-body.
	truncated bool
	// read is how many bytes were read (at most --max-body).
	read int64
	// missingText is the first --expect-body text not found, "" if all were.
	missingText    string
	hasMissingText bool
	// failedRegex is the first --expect-body-regex that did not match.
	failedRegex *regexp.Regexp
	// json is the body kept for --expect-json (nil without it), and
	// jsonOver is set when the body was longer than MaxJSONBody.
	json     []byte
	jsonOver bool
	// encoding is a Content-Encoding the body conditions cannot read
	// (the bytes were not decoded); decodeErr is why a gzip body could
	// not be decoded.
	encoding  string
	decodeErr string
}

// readsBody reports whether a body condition needs the body's content.
func (e *Expectations) readsBody() bool {
	return len(e.BodyText) > 0 || len(e.BodyRegex) > 0 || len(e.JSON) > 0
}

// decodedBody is the body the conditions read: a gzip body (asked for with
// -H 'Accept-Encoding: gzip', which turns Go's own decoding off) is decoded,
// as curl's --compressed does. Any other encoding is returned as is, with
// its name, so the conditions can say why they cannot read it.
func decodedBody(resp *http.Response, conditions bool) (io.Reader, string) {
	ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
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

// scanBody reads the body up to max bytes and checks the body conditions as
// the bytes go by: substrings over a sliding window of the longest text,
// regular expressions through their streaming matcher (regexp's
// MatchReader, one goroutine each). Only --expect-json keeps bytes, at
// most MaxJSONBody. More than max bytes is truncation, not an error.
func (e *Expectations) scanBody(r io.Reader, max int64) (bodyResult, error) {
	var res bodyResult
	// The read buffer is reused across probes (watch runs thousands): it was
	// over half of a sweep's allocations. It goes back only after the regex
	// matchers have stopped (defers run last-in, first-out); a chunk handed
	// to them is consumed before their write returns (io.Pipe).
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	st := newTextScan(e.BodyText)
	rm := startRegexMatchers(e.BodyRegex)
	defer rm.abort()
	keepJSON := len(e.JSON) > 0
	buf := *bp
	var err error
	for res.read < max {
		n := int64(len(buf))
		if left := max - res.read; left < n {
			n = left
		}
		var got int
		got, err = r.Read(buf[:n])
		if got > 0 {
			chunk := buf[:got]
			res.read += int64(got)
			st.write(chunk)
			rm.write(chunk)
			if keepJSON {
				if len(res.json)+got > MaxJSONBody {
					res.jsonOver = true
					keepJSON = false
					res.json = nil
				} else {
					res.json = append(res.json, chunk...)
				}
			}
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	} else if err == nil {
		// max bytes read: one more byte says whether there was more.
		var one [1]byte
		n, rerr := io.ReadFull(r, one[:])
		res.truncated = n > 0
		if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, io.ErrUnexpectedEOF) {
			err = rerr
		}
	}
	if err != nil {
		return res, err
	}
	res.missingText, res.hasMissingText = st.missing()
	res.failedRegex = rm.finish()
	if len(e.JSON) > 0 && res.json == nil && !res.jsonOver {
		res.json = []byte{}
	}
	return res, nil
}

// textScan finds substrings in a stream, keeping only the last
// (longest text - 1) bytes between chunks.
type textScan struct {
	texts []string
	found []bool
	tail  []byte
	edge  []byte
	keep  int
}

func newTextScan(texts []string) *textScan {
	s := &textScan{texts: texts, found: make([]bool, len(texts))}
	for _, t := range texts {
		s.keep = max(s.keep, len(t)-1)
	}
	return s
}

func (s *textScan) write(chunk []byte) {
	if len(s.texts) == 0 {
		return
	}
	// A text is either inside the chunk or crosses from the kept tail
	// into the chunk's first bytes.
	s.edge = append(append(s.edge[:0], s.tail...), chunk[:min(len(chunk), s.keep)]...)
	for i, t := range s.texts {
		if !s.found[i] && (bytes.Contains(chunk, []byte(t)) || bytes.Contains(s.edge, []byte(t))) {
			s.found[i] = true
		}
	}
	if len(chunk) >= s.keep {
		s.tail = append(s.tail[:0], chunk[len(chunk)-s.keep:]...)
		return
	}
	s.tail = append(s.tail, chunk...)
	if len(s.tail) > s.keep {
		s.tail = append(s.tail[:0], s.tail[len(s.tail)-s.keep:]...)
	}
}

func (s *textScan) missing() (string, bool) {
	for i, t := range s.texts {
		if !s.found[i] {
			return t, true
		}
	}
	return "", false
}

// regexMatchers feed the body to one streaming matcher per expression.
type regexMatchers struct {
	res     []*regexp.Regexp
	pipes   []*io.PipeWriter
	done    []bool
	matched []bool
	wg      sync.WaitGroup
	mu      sync.Mutex
}

func startRegexMatchers(res []*regexp.Regexp) *regexMatchers {
	m := &regexMatchers{res: res, done: make([]bool, len(res)), matched: make([]bool, len(res))}
	for i, re := range res {
		pr, pw := io.Pipe()
		m.pipes = append(m.pipes, pw)
		m.wg.Add(1)
		go func() {
			defer crash.Recover()
			defer m.wg.Done()
			ok := re.MatchReader(bufio.NewReaderSize(pr, readChunk))
			m.mu.Lock()
			m.matched[i] = ok
			m.mu.Unlock()
			// Stop the writer: a match needs no more input.
			pr.CloseWithError(errMatchDone)
		}()
	}
	return m
}

var errMatchDone = errors.New("match decided")

func (m *regexMatchers) write(chunk []byte) {
	for i, pw := range m.pipes {
		if m.done[i] {
			continue
		}
		if _, err := pw.Write(chunk); err != nil {
			m.done[i] = true
		}
	}
}

// finish ends the input and returns the first expression that did not
// match, or nil.
func (m *regexMatchers) finish() *regexp.Regexp {
	for _, pw := range m.pipes {
		pw.Close()
	}
	m.wg.Wait()
	m.pipes = nil
	for i, re := range m.res {
		if !m.matched[i] {
			return re
		}
	}
	return nil
}

// abort stops the matchers when the body could not be read.
func (m *regexMatchers) abort() {
	for _, pw := range m.pipes {
		pw.CloseWithError(errMatchDone)
	}
	m.wg.Wait()
}

// truncNote is said after a failed body condition on a truncated body.
func truncNote(b bodyResult, max int64) string {
	if !b.truncated {
		return ""
	}
	return fmt.Sprintf(" (the body was truncated: only the first %s were read, --max-body)", sizeText(max))
}

// sizeText renders a byte count the way --max-body takes it.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
