package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
)

// nohostilebytes FILE...
//
//	fails when a file holds a byte or character that could drive a
//	terminal or reorder text: C0 controls other than newline and tab, DEL,
//	C1 controls (U+0080–U+009F), bidi overrides and isolates, LRM/RLM, the
//	Arabic letter mark, line and paragraph separators, the BOM, or bytes
//	that are not UTF-8. Names the file, the offset and the character.
func init() { extraCmds["nohostilebytes"] = cmdNoHostileBytes }

func cmdNoHostileBytes(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "nohostilebytes")
	if len(args) == 0 {
		ts.Fatalf("usage: nohostilebytes FILE...")
	}
	for _, name := range args {
		var b []byte
		switch name {
		case "stdout":
			b = []byte(ts.ReadFile("stdout"))
		case "stderr":
			b = []byte(ts.ReadFile("stderr"))
		default:
			var err error
			b, err = os.ReadFile(ts.MkAbs(name))
			ts.Check(err)
		}
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				ts.Fatalf("%s: byte %d: %#x is not UTF-8", name, i, b[i])
			}
			if hostileRune(r) {
				ts.Fatalf("%s: byte %d: raw %U in %q", name, i, r, b[max(0, i-40):min(len(b), i+40)])
			}
			i += n
		}
	}
}

func hostileRune(r rune) bool {
	switch {
	case r == '\n', r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	}
	return false
}

// [root] holds when the tests run as root (a planted link owned by another
// user is made with Lchown).
func init() { extraConds["root"] = func() (bool, error) { return os.Geteuid() == 0, nil } }

// plantlink DIR TARGET LINK
//
//	makes DIR a shared sticky directory (mode 1777, as /tmp) and plants
//	DIR/LINK -> TARGET there owned by nobody (uid 65534), as another user
//	of the machine could. Needs [root].
func init() { extraCmds["plantlink"] = cmdPlantLink }

func cmdPlantLink(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "plantlink")
	if len(args) != 3 {
		ts.Fatalf("usage: plantlink DIR TARGET LINK")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	ts.Check(os.Chmod(dir, 0o777|os.ModeSticky))
	link := filepath.Join(dir, args[2])
	ts.Check(os.Symlink(ts.MkAbs(args[1]), link))
	ts.Check(os.Lchown(link, 65534, 65534))
}

// mkfifo FILE
//
//	makes a named pipe (Unix).
func init() { extraCmds["mkfifo"] = cmdMkfifo }

// sparsefile FILE SIZE
//
//	makes FILE a sparse file of SIZE bytes (1GiB, 20MiB, 100): a huge input
//	that costs no disk.
func init() { extraCmds["sparsefile"] = cmdSparseFile }

func cmdSparseFile(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "sparsefile")
	if len(args) != 2 {
		ts.Fatalf("usage: sparsefile FILE SIZE")
	}
	n, err := parseSize(args[1])
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(f.Truncate(n))
	ts.Check(f.Close())
}

func parseSize(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"", 1}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(num, 10, 64)
			return n * u.mult, err
		}
	}
	return 0, fmt.Errorf("%q: want N, NKiB, NMiB or NGiB", s)
}

// mergebomb FILE LEVELS
//
//	writes a targets file whose level i merges level i-1 ten times
//	(`- &mN {<<: [*mN-1 ×10], name: aN}`): 10^LEVELS mappings once expanded.
func init() { extraCmds["mergebomb"] = cmdMergeBomb }

func cmdMergeBomb(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "mergebomb")
	if len(args) != 2 {
		ts.Fatalf("usage: mergebomb FILE LEVELS")
	}
	levels, err := strconv.Atoi(args[1])
	ts.Check(err)
	var b strings.Builder
	b.WriteString("targets:\n  - &m0 {name: a0, url: 'http://127.0.0.1:1/'}\n")
	for i := 1; i <= levels; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*m%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "  - &m%d {<<: [%s], name: a%d}\n", i, refs, i)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
}

// deepjson NAME SIZE
//
//	serves SIZE bytes of `[` (8MiB: a JSON body nested 8 million deep) as
//	application/json to every request; sets $NAME_URL.
func init() { extraCmds["deepjson"] = cmdDeepJSON }

func cmdDeepJSON(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "deepjson")
	if len(args) != 2 {
		ts.Fatalf("usage: deepjson NAME SIZE")
	}
	n, err := parseSize(args[1])
	ts.Check(err)
	body := bytes.Repeat([]byte("["), int(n))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})}
	go srv.Serve(l)
	ts.Defer(func() { srv.Close() })
	addr := l.Addr().(*net.TCPAddr)
	setAddrVars(ts, args[0], "http://"+addr.String(), addr.String(), addr.Port)
}

// echoauth NAME MODE
//
//	a hostile server (or forward proxy) that echoes the credentials it was
//	sent — the request's Authorization, else its Proxy-Authorization
//	value — back where healthctl quotes server text: MODE encoding sends
//	it as the Content-Encoding (Go lowercases that), malformed as a
//	header line without a colon (quoted whole in Go's error), location as
//	a 302's Location. Sets $NAME_URL, $NAME_HOSTPORT, $NAME_PORT.
func init() { extraCmds["echoauth"] = cmdEchoAuth }

func cmdEchoAuth(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "echoauth")
	if len(args) != 2 {
		ts.Fatalf("usage: echoauth NAME encoding|malformed|location")
	}
	mode := args[1]
	switch mode {
	case "encoding", "malformed", "location":
	default:
		ts.Fatalf("echoauth: mode %q: want encoding, malformed or location", mode)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Defer(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				v := req.Header.Get("Authorization")
				if v == "" {
					v = req.Header.Get("Proxy-Authorization")
				}
				var resp string
				switch mode {
				case "encoding":
					resp = "HTTP/1.1 200 OK\r\nContent-Encoding: " + v + "\r\nContent-Length: 1\r\n\r\nx"
				case "malformed":
					resp = "HTTP/1.1 200 OK\r\n" + strings.ReplaceAll(v, ":", "") + "\r\nContent-Length: 1\r\n\r\nx"
				case "location":
					resp = "HTTP/1.1 302 Found\r\nLocation: /next/" + strings.ReplaceAll(v, " ", "/") + "\r\nContent-Length: 0\r\n\r\n"
				}
				io.WriteString(c, resp)
			}(c)
		}
	}()
	addr := l.Addr().(*net.TCPAddr)
	setAddrVars(ts, args[0], "http://"+addr.String(), addr.String(), addr.Port)
}

// manytargets FILE N URL
//
//	writes a targets file of N targets t0…tN-1, all probing URL.
func init() { extraCmds["manytargets"] = cmdManyTargets }

func cmdManyTargets(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "manytargets")
	if len(args) != 3 {
		ts.Fatalf("usage: manytargets FILE N URL")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	var b strings.Builder
	b.WriteString("targets:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: t%d, url: %q}\n", i, args[2])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
}

// slowconns HOSTPORT N
//
//	opens N connections to HOSTPORT (loopback) that send half a request
//	line and then nothing — slowloris — and holds them until the script
//	ends. Fails if fewer than N could be opened.
func init() { extraCmds["slowconns"] = cmdSlowConns }

func cmdSlowConns(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "slowconns")
	if len(args) != 2 {
		ts.Fatalf("usage: slowconns HOSTPORT N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	if host, _, err := net.SplitHostPort(args[0]); err != nil || !net.ParseIP(host).IsLoopback() {
		ts.Fatalf("slowconns: %s: want a loopback HOST:PORT", args[0])
	}
	var conns []net.Conn
	ts.Defer(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.DialTimeout("tcp", args[0], 5*time.Second)
		if err != nil {
			ts.Fatalf("slowconns: connection %d: %v", len(conns)+1, err)
		}
		conns = append(conns, c)
		io.WriteString(c, "GET /metr")
	}
}
