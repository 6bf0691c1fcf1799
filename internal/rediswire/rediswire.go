// Package rediswire is the Redis side of a redis:// probe, pure: the
// commands it sends (AUTH, SELECT, PING, INFO server, CLUSTER INFO) as RESP
// arrays, and the reading of one reply. The probe carries the bytes.
package rediswire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// MaxLine is the longest reply line read: a PING's answer, or an error's
// text, is short; anything longer is not what a Redis server says to it.
const MaxLine = 4096

// Command is a command sent, in the order its reply comes back.
type Command string

// The commands of a probe.
const (
	Auth   Command = "AUTH"
	Select Command = "SELECT"
	Ping   Command = "PING"
	// Info is INFO server: its redis_mode names a Sentinel.
	Info Command = "INFO"
	// ClusterInfo is CLUSTER INFO: its cluster_state on a cluster-mode
	// server (a standalone one refuses it: cluster support disabled).
	ClusterInfo Command = "CLUSTER INFO"
)

// MaxBulk is the longest bulk reply read (INFO server, CLUSTER INFO: under
// 2 KiB from Redis 7).
const MaxBulk = 16 << 10

// Request is what a probe of u sends, pipelined: AUTH when u carries
// credentials (with the user name when it is not empty, as Redis 6 ACLs
// take it), SELECT when its path names a database, then PING, INFO server
// (a Sentinel says so there) and CLUSTER INFO (a cluster-mode server's
// state: PING answers on a cluster that serves no key). cmds lists
// the commands in the order of their replies. The database must be a
// number (the URL's checker refuses anything else; here it is only
// skipped).
func Request(u *url.URL) (b []byte, cmds []Command) {
	if u.User != nil {
		pass, hasPass := u.User.Password()
		user := u.User.Username()
		switch {
		case hasPass && user != "":
			b = appendArray(b, "AUTH", user, pass)
		case hasPass:
			b = appendArray(b, "AUTH", pass)
		default:
			// redis://secret@host: the one word is the password
			// (redis-cli -u and go-redis read it so).
			b = appendArray(b, "AUTH", user)
		}
		cmds = append(cmds, Auth)
	}
	if db, ok := DB(u); ok && db != 0 {
		b = appendArray(b, "SELECT", strconv.Itoa(db))
		cmds = append(cmds, Select)
	}
	b = appendArray(b, "PING")
	b = appendArray(b, "INFO", "server")
	b = appendArray(b, "CLUSTER", "INFO")
	return b, append(cmds, Ping, Info, ClusterInfo)
}

// Field is the value of key in an INFO-shaped text ("key:value" lines),
// "" when it has none.
func Field(text, key string) string {
	for line := range strings.Lines(text) {
		if k, v, ok := strings.Cut(strings.TrimRight(line, "\r\n"), ":"); ok && k == key {
			return v
		}
	}
	return ""
}

// DB is the database a URL's path names ("/3"), ok false when it names
// none ("" or "/"); a path that is not a number is bad.
func DB(u *url.URL) (db int, ok bool) {
	p := strings.TrimPrefix(u.Path, "/")
	if p == "" {
		return 0, false
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || p[0] == '+' {
		return -1, true
	}
	return n, true
}

// CheckPath says what is wrong with a redis:// URL's path, nil when it is
// empty or names a database.
func CheckPath(u *url.URL) error {
	if db, ok := DB(u); ok && db < 0 {
		return fmt.Errorf("%s URL's path %q is not a database number (want %s://[[USER]:PASSWORD@]HOST[:PORT][/DB])", u.Scheme, u.Path, u.Scheme)
	}
	return nil
}

func appendArray(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// Reply is one reply as read: its RESP type byte and the text of its first
// line (a simple string's or an error's text; for other types the line as
// it came).
type Reply struct {
	Type byte
	Text string
}

// IsError says the reply is an error ("-ERR …", "-LOADING …").
func (r Reply) IsError() bool { return r.Type == '-' }

// Code is an error reply's first word (LOADING, NOAUTH, ERR), "" for a
// reply that is no error.
func (r Reply) Code() string {
	if !r.IsError() {
		return ""
	}
	code, _, _ := strings.Cut(r.Text, " ")
	return code
}

// String is the reply as the server sent it, without its CRLF.
func (r Reply) String() string { return string(r.Type) + r.Text }

// NotRESPError is an answer that is not RESP: Seen is what came instead
// (its first line, at most 64 bytes).
type NotRESPError struct {
	Seen string
}

func (e *NotRESPError) Error() string {
	return fmt.Sprintf("not a Redis reply: %q", e.Seen)
}

// ErrNoReply is a connection that ended before a whole reply line came
// (the server closed it, or said something without a line end).
var ErrNoReply = errors.New("the connection ended before a whole Redis reply")

// respTypes are the first bytes of RESP2 and RESP3 replies.
const respTypes = "+-:$*_,#!=(%~>|"

// Read reads one reply's first line. A reply whose type is not a line
// (a bulk string, an array, a RESP3 aggregate) comes back with its first
// line only: a probe sends nothing those are the answer to, and stops
// reading at it. A first byte that is no RESP type is a *NotRESPError; an
// error from r before a whole line is returned as it is, or, for EOF, as
// ErrNoReply (wrapping io.ErrUnexpectedEOF when some bytes came).
func Read(r *bufio.Reader) (Reply, error) {
	first, err := r.Peek(1)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Reply{}, ErrNoReply
		}
		return Reply{}, err
	}
	if !strings.Contains(respTypes, string(first[0])) {
		return Reply{}, &NotRESPError{Seen: seen(r)}
	}
	line, err := readLine(r)
	if err != nil {
		if errors.Is(err, errLong) {
			return Reply{}, &NotRESPError{Seen: line[:min(len(line), 64)]}
		}
		if errors.Is(err, io.EOF) {
			return Reply{}, fmt.Errorf("%w (%q)", ErrNoReply, line[:min(len(line), 64)])
		}
		return Reply{}, err
	}
	return Reply{Type: line[0], Text: line[1:]}, nil
}

var errLong = errors.New("reply line too long")

// ReadBulk reads one reply as Read does and, when it is a bulk string
// ("$N"), its N bytes too (at most MaxBulk), which become its Text; a
// null bulk ("$-1") has the Text "". Bulk bytes that do not come whole are
// ErrNoReply (or the reader's error).
func ReadBulk(r *bufio.Reader) (Reply, error) {
	rep, err := Read(r)
	if err != nil || rep.Type != '$' {
		return rep, err
	}
	n, err := strconv.Atoi(rep.Text)
	switch {
	case err != nil || n < -1 || n > MaxBulk:
		return Reply{}, &NotRESPError{Seen: rep.String()[:min(len(rep.String()), 64)]}
	case n == -1:
		return Reply{Type: '$'}, nil
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Reply{}, ErrNoReply
		}
		return Reply{}, err
	}
	if string(b[n:]) != "\r\n" {
		return Reply{}, &NotRESPError{Seen: rep.String()}
	}
	return Reply{Type: '$', Text: string(b[:n])}, nil
}

// readLine reads up to CRLF (or LF), at most MaxLine bytes, and returns
// the line without its end.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		frag, err := r.ReadSlice('\n')
		b = append(b, frag...)
		if len(b) > MaxLine {
			return string(b), errLong
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return string(b), err
	}
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return string(b), nil
}

// seen is the first line of what is buffered, at most 64 bytes: what a
// server that is not Redis said (never a read that waits for more).
func seen(r *bufio.Reader) string {
	b, _ := r.Peek(min(64, r.Buffered()))
	s := string(b)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
