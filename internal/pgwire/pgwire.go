// Package pgwire is the PostgreSQL side of a postgres:// probe, pure: the
// messages it sends (SSLRequest, the startup message pg_isready sends,
// Terminate) and the reading of the server's answer to them, up to the
// first message that says whether it accepts connections. The probe
// carries the bytes. Protocol 3.0 (PostgreSQL 7.4 and later).
package pgwire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// DefaultUser is the user a URL without one connects as (pg_isready's is
// the login name of whoever runs it; a probe's is the same wherever it
// runs). The database defaults to the user's name, as libpq's does.
const DefaultUser = "postgres"

// MaxMessage is the longest message read: an ErrorResponse or an
// authentication request is short.
const MaxMessage = 16 << 10

// SSLRequest asks the server to switch to TLS; it answers one byte, S or N.
var SSLRequest = []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}

// Terminate ends a session politely.
var Terminate = []byte{'X', 0, 0, 0, 4}

// UserDB is the user and database a URL names, with their defaults.
func UserDB(u *url.URL) (user, db string) {
	user = DefaultUser
	if u.User != nil && u.User.Username() != "" {
		user = u.User.Username()
	}
	db = strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = user
	}
	return user, db
}

// Startup is the startup message for user and db (protocol 3.0), with
// application_name healthctl, as pg_isready sends its own.
func Startup(user, db string) []byte {
	b := make([]byte, 8, 64)
	binary.BigEndian.PutUint32(b[4:], 3<<16)
	for _, kv := range [...]string{"user", user, "database", db, "application_name", "healthctl"} {
		b = append(b, kv...)
		b = append(b, 0)
	}
	b = append(b, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

// Answer is what the server answered the startup message with.
type Answer struct {
	// Auth: an authentication request (or AuthenticationOk): the server
	// accepts connections. AuthCode is its code (0 ok, 3 cleartext
	// password, 5 MD5, 10 SASL …).
	Auth     bool
	AuthCode uint32
	// LoggedIn: the probe logged in with the URL's password and an empty
	// query was answered (the probe's login, not this package's reading).
	LoggedIn bool
	// ReadOnly: logged in, and the session is read-only (a hot standby,
	// default_transaction_read_only) where target_session_attrs=read-write
	// asked for one that is not.
	ReadOnly bool
	// Error is an ErrorResponse's fields (nil when none came).
	Error *ErrorFields
}

// ErrorFields are the fields of an ErrorResponse that say what happened.
type ErrorFields struct {
	Severity string
	Code     string
	Message  string
	Detail   string
}

// NotPostgresError is an answer that is not PostgreSQL's: Seen is what came
// (its first line, at most 64 bytes).
type NotPostgresError struct {
	Seen string
}

func (e *NotPostgresError) Error() string {
	return fmt.Sprintf("not a PostgreSQL message: %q", e.Seen)
}

// ErrNoAnswer is a connection that ended before a whole message came.
var ErrNoAnswer = errors.New("the connection ended before a whole PostgreSQL message")

// Read reads messages until one decides: an authentication request, or an
// ErrorResponse. Notices and NegotiateProtocolVersion are skipped. A
// message whose type or length no PostgreSQL server sends here is a
// *NotPostgresError; EOF before a whole message is ErrNoAnswer (wrapping
// the read's error).
func Read(r *bufio.Reader) (Answer, error) {
	for {
		typ, body, err := readMessage(r)
		if err != nil {
			return Answer{}, err
		}
		switch typ {
		case 'R':
			if len(body) < 4 {
				return Answer{}, &NotPostgresError{Seen: fmt.Sprintf("an authentication message of %d bytes", len(body))}
			}
			return Answer{Auth: true, AuthCode: binary.BigEndian.Uint32(body)}, nil
		case 'E':
			f := parseFields(body)
			return Answer{Error: &f}, nil
		case 'N', 'v':
			continue
		}
		return Answer{}, &NotPostgresError{Seen: fmt.Sprintf("message type %q", typ)}
	}
}

// readMessage reads one message: a type byte, a length (itself included)
// and the body.
func readMessage(r *bufio.Reader) (byte, []byte, error) {
	hdr, err := r.Peek(5)
	if err != nil {
		if len(hdr) > 0 && !strings.ContainsRune("RENv", rune(hdr[0])) {
			return 0, nil, &NotPostgresError{Seen: firstLine(hdr)}
		}
		if errors.Is(err, io.EOF) {
			return 0, nil, fmt.Errorf("%w: %w", ErrNoAnswer, err)
		}
		return 0, nil, err
	}
	typ := hdr[0]
	n := binary.BigEndian.Uint32(hdr[1:])
	if !strings.ContainsRune("RENv", rune(typ)) || n < 4 || n > MaxMessage {
		b, _ := r.Peek(min(64, r.Buffered()))
		return 0, nil, &NotPostgresError{Seen: firstLine(b)}
	}
	msg := make([]byte, 1+n)
	if _, err := io.ReadFull(r, msg); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, fmt.Errorf("%w: %w", ErrNoAnswer, io.ErrUnexpectedEOF)
		}
		return 0, nil, err
	}
	return typ, msg[5:], nil
}

// parseFields reads an ErrorResponse's (or a notice's) fields: a code byte
// and a NUL-terminated string each, a NUL at the end.
func parseFields(b []byte) ErrorFields {
	var f ErrorFields
	for len(b) > 0 && b[0] != 0 {
		code := b[0]
		v, rest, _ := strings.Cut(string(b[1:]), "\x00")
		b = []byte(rest)
		switch code {
		case 'V':
			f.Severity = v
		case 'S':
			if f.Severity == "" {
				f.Severity = v
			}
		case 'C':
			f.Code = v
		case 'M':
			f.Message = v
		case 'D':
			f.Detail = v
		}
	}
	return f
}

func firstLine(b []byte) string {
	s := string(b[:min(len(b), 64)])
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
