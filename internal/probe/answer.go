package probe

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
)

// readResponse reads an answer's status line and headers from br as
// http.ReadResponse does. The common answer (HTTP/1.1, a status of three
// digits and a printable reason, headers whose names are letters, digits
// and dashes and whose values are printable, one Content-Length, Connection:
// close, nothing else that ReadResponse would rewrite or act on, all of it
// already buffered) is parsed here; anything else, every error included,
// is left to ReadResponse, which then reads from where the answer starts.
// TestReadResponseAsNetHTTP compares the two over random and hostile
// answers. A sweep reads one answer a target, and ReadResponse's readers,
// maps and copies were a twentieth of its CPU.
func readResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	if resp, n := parseAnswer(br, req); resp != nil {
		br.Discard(n)
		return resp, nil
	}
	return http.ReadResponse(br, req)
}

// parseAnswer parses the common answer from br's buffer without reading:
// the response and the length of its head, nil when it is not the common
// answer.
func parseAnswer(br *bufio.Reader, req *http.Request) (*http.Response, int) {
	if req.Method == http.MethodHead {
		return nil, 0
	}
	buf, _ := br.Peek(br.Buffered())
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, 0
	}
	// One copy of the head: the status and every value are parts of it.
	head := string(buf[:end+2])
	eol := strings.Index(head, "\r\n")
	line := head[:eol]
	if len(line) < len("HTTP/1.1 200") || line[:9] != "HTTP/1.1 " || !printable(line) {
		return nil, 0
	}
	code := 0
	for _, c := range []byte(line[9:12]) {
		if c < '0' || c > '9' {
			return nil, 0
		}
		code = code*10 + int(c-'0')
	}
	if len(line) > 12 && line[12] != ' ' {
		return nil, 0
	}
	if code < 200 || code == http.StatusNoContent || code == http.StatusNotModified {
		// No body, or an informational answer: ReadResponse's rules.
		return nil, 0
	}
	a := &answer{resp: http.Response{Status: line[9:], StatusCode: code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header, 8), Request: req, ContentLength: -1, Close: true}}
	resp := &a.resp
	vals := a.values[:0:len(a.values)]
	closed := false
	for i := eol + 2; i < len(head); {
		eol = i + strings.Index(head[i:], "\r\n")
		kv := head[i:eol]
		i = eol + 2
		colon := 0
		for colon < len(kv) && kv[colon] != ':' {
			if !keyByte(kv[colon]) {
				return nil, 0
			}
			colon++
		}
		if colon == 0 || colon == len(kv) || !printableOrTab(kv[colon+1:]) {
			return nil, 0
		}
		// A key of letters, digits and dashes is canonical as
		// textproto makes it (no copy when it already is).
		key, v := http.CanonicalHeaderKey(kv[:colon]), strings.Trim(kv[colon+1:], " \t")
		switch key {
		case "Content-Length":
			if resp.ContentLength >= 0 || len(v) == 0 || len(v) > 18 {
				return nil, 0
			}
			n := int64(0)
			for _, c := range []byte(v) {
				if c < '0' || c > '9' {
					return nil, 0
				}
				n = n*10 + int64(c-'0')
			}
			resp.ContentLength = n
		case "Connection":
			// ReadResponse drops a Connection: close it acts on.
			if closed || !strings.EqualFold(v, "close") {
				return nil, 0
			}
			closed = true
			continue
		case "Transfer-Encoding", "Trailer", "Pragma":
			// Framing, trailers, a header ReadResponse rewrites.
			return nil, 0
		}
		if len(vals) == cap(vals) {
			vals = make([]string, 0, 8)
		}
		vals = append(vals, v)
		if vs, ok := resp.Header[key]; ok {
			resp.Header[key] = append(vs, v)
		} else {
			resp.Header[key] = vals[len(vals)-1 : len(vals) : len(vals)]
		}
	}
	if !closed || resp.ContentLength < 0 {
		return nil, 0
	}
	if resp.ContentLength == 0 {
		resp.Body = http.NoBody
	} else {
		a.body.lr = io.LimitedReader{R: br, N: resp.ContentLength}
		resp.Body = &a.body
	}
	return resp, end + 4
}

// answer is what parseAnswer makes, in one allocation: the response, its
// body, and room for the values of most answers' headers.
type answer struct {
	resp   http.Response
	body   lengthBody
	values [8]string
}

// lengthBody is a body of Content-Length bytes on a connection that closes
// after it, read as net/http's body reads one: io.ErrUnexpectedEOF when
// the connection ends early, io.EOF with the last bytes, nothing read after
// Close (which reads nothing: the connection closes).
type lengthBody struct {
	lr             io.LimitedReader
	sawEOF, closed bool
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.sawEOF {
		return 0, io.EOF
	}
	n, err := b.lr.Read(p)
	if err == io.EOF {
		b.sawEOF = true
		if b.lr.N > 0 {
			err = io.ErrUnexpectedEOF
		}
	}
	if err == nil && n > 0 && b.lr.N == 0 {
		err, b.sawEOF = io.EOF, true
	}
	return n, err
}

func (b *lengthBody) Close() error {
	b.closed = true
	return nil
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func printableOrTab(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < ' ' && s[i] != '\t') || s[i] > '~' {
			return false
		}
	}
	return true
}

func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
}
