package expect

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/healthctl/healthctl/internal/crash"
)

// MaxJSONBody is the most of a body kept for --expect-json: a JSON document
// can only be checked whole, so a longer body fails the condition (saying
// so) instead of being held in memory. --expect-body and
// --expect-body-regex stream and hold no body at all.
const MaxJSONBody = 8 << 20

// matchBuffer is the read-ahead of one streaming regular expression.
const matchBuffer = 32 << 10

// Body is what the body conditions learned from the bytes read, plus what
// the reader knows about them (truncation, encoding).
type Body struct {
	// Truncated is set when the body went on past --max-body.
	Truncated bool
	// Read is how many bytes were read (at most --max-body).
	Read int64
	// MissingText is the first --expect-body text not found.
	MissingText    string
	HasMissingText bool
	// FailedRegex is the first --expect-body-regex that did not match.
	FailedRegex *regexp.Regexp
	// MatchedNot is the first negative body condition that matched;
	// DegradedRegex the first degraded body condition that matched.
	MatchedNot    *regexp.Regexp
	DegradedRegex *regexp.Regexp
	// JSON is the body kept for --expect-json (nil without it), and
	// JSONOver is set when the body was longer than MaxJSONBody.
	JSON     []byte
	JSONOver bool
	// Encoding is a Content-Encoding the body conditions cannot read
	// (the bytes were not decoded); DecodeErr is why a gzip body could
	// not be decoded.
	Encoding  string
	DecodeErr string
	// Head is the body's first headKeep bytes as read (decoded when
	// gzip was decoded), for the excerpt of a failing answer.
	Head []byte
	// Trailer is the trailer fields that came after the body (HTTP/1.1
	// chunked trailers, HTTP/2 trailers), nil when none came or the body
	// was not read to its end.
	Trailer http.Header
}

// ExcerptMax is how much of a body's start is shown with a failing
// answer: a health endpoint says why it failed there.
const ExcerptMax = 512

// headKeep is how much of the start is kept: twice what is shown, so a
// secret that crosses the cut is still whole when it is redacted.
const headKeep = 2 * ExcerptMax

// Excerpt is what is shown of a body's start: head redacted (redact may
// be nil), cut to ExcerptMax bytes on a character's edge, invalid UTF-8
// replaced, and "…" when more followed. Control characters stay: the
// output escapes them as it escapes every text a server sends.
func Excerpt(head []byte, more bool, redact func(string) string) string {
	s := strings.ToValidUTF8(string(head), "\uFFFD")
	if redact != nil {
		s = redact(s)
	}
	if len(s) > ExcerptMax {
		cut := ExcerptMax
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s, more = s[:cut], true
	}
	if more {
		s += "…"
	}
	return s
}

// ReadsBody reports whether a body condition needs the body's content.
func (e *Expectations) ReadsBody() bool {
	return len(e.BodyText) > 0 || len(e.BodyRegex) > 0 || len(e.JSON) > 0 ||
		len(e.BodyNotRegex) > 0 || len(e.DegradedBody) > 0 || len(e.DegradedJSON) > 0
}

// keepsJSON says a JSON condition needs the body kept.
func (e *Expectations) keepsJSON() bool { return len(e.JSON) > 0 || len(e.DegradedJSON) > 0 }

// Scan checks the body conditions as the bytes go by: substrings over a
// sliding window of the longest text, regular expressions through their
// streaming matcher (regexp's MatchReader, one goroutine each). Only
// --expect-json keeps bytes, at most MaxJSONBody. The reader calls Write
// with each chunk, then Finish (the body was read) or Abort (it was not).
type Scan struct {
	e *Expectations
	// The text and regex scans are parts of the Scan, not allocations of
	// their own: a sweep starts one scan a target, most with no condition.
	text     textScan
	regex    regexMatchers
	keepJSON bool
	body     Body
	head     [headKeep]byte
	headN    int
}

// NewScan starts the body conditions of e.
func (e *Expectations) NewScan() *Scan {
	s := &Scan{e: e, keepJSON: e.keepsJSON()}
	s.text.init(e.BodyText)
	res := e.BodyRegex
	if len(e.BodyNotRegex)+len(e.DegradedBody) > 0 {
		// One matcher set for all three kinds, told apart by index.
		res = append(append(append([]*regexp.Regexp(nil), e.BodyRegex...), e.BodyNotRegex...), e.DegradedBody...)
	}
	s.regex.start(res)
	return s
}

// Write feeds one chunk of the body; it is consumed before Write returns.
func (s *Scan) Write(chunk []byte) {
	s.body.Read += int64(len(chunk))
	if s.headN < headKeep {
		s.headN += copy(s.head[s.headN:], chunk)
	}
	s.text.write(chunk)
	s.regex.write(chunk)
	if s.keepJSON {
		if len(s.body.JSON)+len(chunk) > MaxJSONBody {
			s.body.JSONOver = true
			s.keepJSON = false
			s.body.JSON = nil
		} else {
			s.body.JSON = append(s.body.JSON, chunk...)
		}
	}
}

// Finish ends the input and returns what the conditions learned.
func (s *Scan) Finish() Body {
	s.body.MissingText, s.body.HasMissingText = s.text.missing()
	matched := s.regex.finish()
	n, m := len(s.e.BodyRegex), len(s.e.BodyNotRegex)
	for i, ok := range matched {
		switch re := s.regex.res[i]; {
		case i < n && !ok && s.body.FailedRegex == nil:
			s.body.FailedRegex = re
		case i >= n && i < n+m && ok && s.body.MatchedNot == nil:
			s.body.MatchedNot = re
		case i >= n+m && ok && s.body.DegradedRegex == nil:
			s.body.DegradedRegex = re
		}
	}
	if s.e.keepsJSON() && s.body.JSON == nil && !s.body.JSONOver {
		s.body.JSON = []byte{}
	}
	s.body.Head = s.head[:s.headN]
	return s.body
}

// Abort stops the matchers when the body could not be read; it is safe
// after Finish.
func (s *Scan) Abort() { s.regex.abort() }

// Partial is what was learned of a body that could not be read to its
// end: its length and its first bytes.
func (s *Scan) Partial() Body { return Body{Read: s.body.Read, Head: s.head[:s.headN]} }

// textScan finds substrings in a stream, keeping only the last
// (longest text - 1) bytes between chunks.
type textScan struct {
	texts []string
	found []bool
	tail  []byte
	edge  []byte
	keep  int
}

// init readies the scan for texts.
func (s *textScan) init(texts []string) {
	s.texts = texts
	if len(texts) > 0 {
		s.found = make([]bool, len(texts))
	}
	for _, t := range texts {
		s.keep = max(s.keep, len(t)-1)
	}
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

// start starts one matcher for each of res.
func (m *regexMatchers) start(res []*regexp.Regexp) {
	m.res = res
	if len(res) > 0 {
		m.done, m.matched = make([]bool, len(res)), make([]bool, len(res))
	}
	for i, re := range res {
		pr, pw := io.Pipe()
		m.pipes = append(m.pipes, pw)
		m.wg.Add(1)
		go func() {
			defer crash.Recover()
			defer m.wg.Done()
			ok := re.MatchReader(bufio.NewReaderSize(pr, matchBuffer))
			m.mu.Lock()
			m.matched[i] = ok
			m.mu.Unlock()
			// Stop the writer: a match needs no more input.
			pr.CloseWithError(errMatchDone)
		}()
	}
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

// finish ends the input and says which expressions matched, in order.
func (m *regexMatchers) finish() []bool {
	for _, pw := range m.pipes {
		pw.Close()
	}
	m.wg.Wait()
	m.pipes = nil
	return m.matched
}

// abort stops the matchers when the body could not be read.
func (m *regexMatchers) abort() {
	for _, pw := range m.pipes {
		pw.CloseWithError(errMatchDone)
	}
	m.wg.Wait()
}

// truncNote is said after a failed body condition on a truncated body.
func truncNote(b Body, max int64) string {
	if !b.Truncated {
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
