package probe

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// chunks reads s in pieces of random size, as a connection hands over an
// answer: the head is not always buffered whole.
type chunks struct {
	s string
	r *rand.Rand
}

func (c *chunks) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := min(len(p), len(c.s), 1+c.r.IntN(400))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// answerSeen is what a reader of an answer gets from it: every field the
// probe reads, the body with its error, and what is left on the connection.
func answerSeen(resp *http.Response, err error, br *bufio.Reader) string {
	if err != nil {
		return "error: " + err.Error()
	}
	nobody := resp.Body == http.NoBody
	body, berr := io.ReadAll(resp.Body)
	cerr := resp.Body.Close()
	_, rerr := resp.Body.Read(make([]byte, 1))
	rest, _ := io.ReadAll(br)
	return fmt.Sprintf("%q %d %q %d.%d header=%#v cl=%d close=%v te=%q trailer=%v unc=%v req=%v nobody=%v\nbody=%q %v close=%v after=%v rest=%q",
		resp.Status, resp.StatusCode, resp.Proto, resp.ProtoMajor, resp.ProtoMinor, resp.Header, resp.ContentLength,
		resp.Close, resp.TransferEncoding, resp.Trailer, resp.Uncompressed, resp.Request != nil, nobody,
		body, berr, cerr, rerr != nil, rest)
}

// readBoth reads one answer (src makes a fresh reader of it each time) with
// readResponse and with http.ReadResponse, through a buffer of size bytes
// filled once as a connection's first read fills it: what a reader gets
// from each (answerSeen), and whether parseAnswer took it.
func readBoth(src func() io.Reader, req *http.Request, size int) (got, want string, claimed bool) {
	read := func(f func(*bufio.Reader, *http.Request) (*http.Response, error)) (string, bool) {
		br := bufio.NewReaderSize(src(), size)
		br.Peek(1)
		resp, _ := parseAnswer(br, req)
		got, err := f(br, req)
		return answerSeen(got, err, br), resp != nil
	}
	got, claimed = read(readResponse)
	want, _ = read(http.ReadResponse)
	return got, want, claimed
}

// TestReadResponseAsNetHTTP is the oracle of readResponse's own parser:
// over random and hostile answers, handed over in random pieces, what a
// reader gets from readResponse is what it gets from http.ReadResponse —
// the same fields, header map, body, body errors and bytes left over, or
// the same error. Both paths must run: the common answer parsed here, the
// rest by ReadResponse.
func TestReadResponseAsNetHTTP(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 3))
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	fast := 0
	const runs = 20000
	for i := range runs {
		var b strings.Builder
		common := r.IntN(2) == 0
		if common && r.IntN(5) > 0 {
			b.WriteString(pick("HTTP/1.1 200 OK", "HTTP/1.1 503 Service Unavailable", "HTTP/1.1 418 I'm a teapot", "HTTP/1.1 200"))
		} else {
			b.WriteString(pick("HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 503 Service Unavailable", "HTTP/1.1 404",
				"HTTP/1.1 204 No Content", "HTTP/1.1 304 Not Modified", "HTTP/1.1 100 Continue", "HTTP/1.0 200 OK",
				"HTTP/1.1  200 OK", "HTTP/1.1 +20 OK", "HTTP/1.1 2000 OK", "HTTP/1.1 200OK", "HTTP/1.1 200 ", "HTTP/1.1 999 x",
				"HTTP/1.1 200 \x01bad", "HTTP/1.1 200 \xc3\xa9", "HTTP/2 200", "http/1.1 200 OK", "HTTP/1.1", "", "HTTP/1.1 200 OK\n"))
		}
		b.WriteString("\r\n")
		cl := -1
		var lines []string
		if common {
			// A common answer, in a random order, sometimes with a
			// hostile line among its lines below.
			cl = r.IntN(40)
			length := fmt.Sprintf("Content-Length: %d", cl)
			if r.IntN(4) == 0 {
				length = pick("Content-Length: 99999999999999999999", "Content-Length: 999999999999999999", "Content-Length: 1e2",
					"Content-Length:  03 ", "Content-Length: ", "Content-Length: -1", "content-length: 3", "Content-Length: 0")
			}
			conn := "Connection: close"
			if r.IntN(4) == 0 {
				conn = pick("Connection: Close", "Connection: CLOSE", "Connection: closed", "Connection: close, x",
					"Connection: keep-alive", "Connection:  close ", "Connection: cl\tose")
			}
			lines = append(lines, length, conn,
				pick("Server: nginx", "Content-Type: text/plain", "x-lower: v", "X-Tab:\tv\t",
					// keys textproto canonicalizes in its own ways
					"x--y: 1", "ETAG: e", "-x: 1", "X-: 1", "a: 1", "X-1a-b: 1", "www-authenticate: Basic"))
			r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
			for _, l := range lines {
				b.WriteString(l + "\r\n")
			}
		}
		hostile := r.IntN(9)
		if common {
			hostile = r.IntN(4) / 3
		}
		for range hostile {
			switch h := pick("Server: nginx", "Date: Tue, 01 Dec 2026 22:00:00 GMT", "Content-Type: text/plain",
				"Content-Length", "Content-Length", "Content-Length", "Connection: close", "Connection: close",
				"connection: Close", "Connection: keep-alive", "Connection: close, x", "content-length: 3",
				"Content-Length: 3", "Content-Length: 3 ", "Content-Length:  03", "Content-Length: -1",
				"Content-Length: ", "Content-Length: 1e2", "Content-Length: 99999999999999999999",
				"Transfer-Encoding: chunked", "Trailer: X", "Pragma: no-cache", "X-A: 1", "x-a: 2", "X-A:3",
				"X-Tab:\tv\t", "X-Space:  v  ", "X-Empty:", "X-Non-Ascii: \xc3\xa9", "X-Ctl: a\x01b", "X-Del: \x7f",
				" folded", "\tfolded", "Bad Key: v", "Bad\x01: v", ": empty", "NoColon", "X-1a-B: d", "ÄÖ: x",
				"Content-Encoding: gzip", "Retry-After: 5", "Location: /x", "WWW-Authenticate: Basic", "x-lower-case: y",
				"X-Bare-LF: a\nb", "X-CR: a\rb"); h {
			case "Content-Length":
				cl = r.IntN(40)
				fmt.Fprintf(&b, "Content-Length: %d\r\n", cl)
			default:
				b.WriteString(h + pick("\r\n", "\r\n", "\r\n", "\n"))
			}
		}
		b.WriteString(pick("\r\n", "\r\n", "\r\n", "\n", ""))
		n := cl
		if n < 0 || r.IntN(5) == 0 {
			n = r.IntN(50)
		}
		b.WriteString(strings.Repeat("b", n))
		answer := b.String()
		req, _ := http.NewRequest(pick("GET", "GET", "GET", "HEAD", "POST"), "http://127.0.0.1/", nil)
		seed := r.Uint64()
		got, want, claimed := readBoth(func() io.Reader { return &chunks{answer, rand.New(rand.NewPCG(seed, 1))} }, req, answerBuffer)
		if got != want {
			t.Fatalf("answer %d %q (%s):\nreadResponse: %s\nReadResponse: %s", i, answer, req.Method, got, want)
		}
		if claimed {
			fast++
			if strings.HasPrefix(want, "error") {
				t.Fatalf("answer %q: parsed here, but ReadResponse refuses it: %s", answer, want)
			}
		}
	}
	if fast < runs/20 || fast > runs*19/20 {
		t.Fatalf("parsed here %d of %d answers: both paths must run", fast, runs)
	}
	// The common answer of a sweep takes the fast path.
	br := bufio.NewReader(strings.NewReader("HTTP/1.1 200 OK\r\nServer: nginx/1.26.3\r\nDate: Tue, 01 Dec 2026 22:00:00 GMT\r\n" +
		"Content-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"))
	br.Peek(1)
	req, _ := http.NewRequest("GET", "http://127.0.0.1/", nil)
	if resp, _ := parseAnswer(br, req); resp == nil {
		t.Fatal("nginx's answer is not parsed here")
	}
	t.Logf("parsed here: %d of %d", fast, runs)
}
