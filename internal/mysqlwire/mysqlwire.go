// Package mysqlwire is the MySQL/MariaDB side of a mysql:// probe: the
// server's greeting (HandshakeV10) or the ERR packet it sends instead
// (too many connections, host blocked, shutting down), and, with a
// password in the URL, the login (HandshakeResponse41 with
// mysql_native_password or caching_sha2_password, an auth switch, the RSA
// exchange of caching_sha2's full authentication over a clear connection)
// and COM_PING, as the mysql client does. Pure but for the reader and
// writer it is given; the probe carries the bytes.
package mysqlwire

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// MaxPacket is the longest packet read: a greeting, an ERR, an auth
// switch or an RSA public key are well under it.
const MaxPacket = 16 << 10

// The capability flags the probe uses.
const (
	capLongPassword     = 0x1
	capConnectWithDB    = 0x8
	capProtocol41       = 0x200
	capTransactions     = 0x2000
	capSecureConnection = 0x8000
	capPluginAuth       = 0x80000
)

// The authentication plugins the probe speaks.
const (
	NativePassword = "mysql_native_password"
	CachingSHA2    = "caching_sha2_password"
)

// Greeting is the server's HandshakeV10: it accepts connections.
type Greeting struct {
	Version string
	ConnID  uint32
	Caps    uint32
	// Scramble is the authentication data (20 bytes); Plugin the
	// server's default authentication plugin.
	Scramble []byte
	Plugin   string
}

// ErrPacket is an ERR packet's fields.
type ErrPacket struct {
	Code    uint16
	State   string
	Message string
}

func (e *ErrPacket) Error() string { return fmt.Sprintf("ERROR %d: %s", e.Code, e.Message) }

// NotMySQLError is an answer that is not a MySQL packet: Seen is what came.
type NotMySQLError struct{ Seen string }

func (e *NotMySQLError) Error() string { return "not a MySQL answer: " + e.Seen }

// ErrNoAnswer is a connection that ended before a whole packet.
var ErrNoAnswer = errors.New("the connection ended before a whole MySQL packet")

// UserDB are the URL's user and database ("" when it names none).
func UserDB(u *url.URL) (user, db string) {
	if u.User != nil {
		user = u.User.Username()
	}
	return user, strings.TrimPrefix(u.Path, "/")
}

// CheckPath holds a URL's path to a database name.
func CheckPath(u *url.URL) error {
	if strings.Contains(strings.TrimPrefix(u.Path, "/"), "/") {
		return fmt.Errorf("%s URL's path %q is more than a database name", u.Scheme, u.Path)
	}
	return nil
}

// URLForm is the URL form of a mysql:// probe.
func URLForm(u *url.URL) string {
	return u.Scheme + "://[USER[:PASSWORD]@]HOST[:PORT][/DB]"
}

// CheckURL holds a mysql:// URL to what the probe sends: a user and
// password, a database name as the path, no query. The scheme table's row
// applies it after the rules every database's URL shares (internal/scheme:
// no fragment, no control character in the database's name).
func CheckURL(u *url.URL) error {
	form := URLForm(u)
	if u.RawQuery != "" || u.ForceQuery {
		return fmt.Errorf("%s URL has a query, which the probe does not use (want %s)", u.Scheme, form)
	}
	if err := CheckPath(u); err != nil {
		return fmt.Errorf("%w (want %s)", err, form)
	}
	return nil
}

// readPacket reads one packet: its sequence number and payload.
func readPacket(r *bufio.Reader) (byte, []byte, error) {
	hdr, err := r.Peek(4)
	if err != nil {
		if len(hdr) > 0 {
			return 0, nil, &NotMySQLError{Seen: strconv.Quote(string(hdr))}
		}
		return 0, nil, noAnswer(err)
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	if n == 0 || n > MaxPacket {
		return 0, nil, &NotMySQLError{Seen: firstLine(r)}
	}
	seq := hdr[3]
	r.Discard(4)
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, noAnswer(err)
	}
	return seq, b, nil
}

func noAnswer(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", ErrNoAnswer, err)
	}
	return err
}

// firstLine quotes the first line of what is buffered (at most 64 bytes).
func firstLine(r *bufio.Reader) string {
	b, _ := r.Peek(min(r.Buffered(), 64))
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strconv.Quote(string(bytes.TrimRight(line, "\r")))
}

// writePacket writes one packet.
func writePacket(w io.Writer, seq byte, payload []byte) error {
	b := make([]byte, 4, 4+len(payload))
	b[0], b[1], b[2], b[3] = byte(len(payload)), byte(len(payload)>>8), byte(len(payload)>>16), seq
	_, err := w.Write(append(b, payload...))
	return err
}

// ReadGreeting reads the server's first packet: its greeting, or the ERR
// it sends instead (exactly one of the two, err nil). What is not MySQL
// is a *NotMySQLError.
func ReadGreeting(r *bufio.Reader) (*Greeting, *ErrPacket, error) {
	_, p, err := readPacket(r)
	if err != nil {
		return nil, nil, err
	}
	switch p[0] {
	case 0xff:
		e, err := parseErr(p)
		return nil, e, err
	case 10:
		g, err := parseGreeting(p)
		return g, nil, err
	}
	return nil, nil, &NotMySQLError{Seen: fmt.Sprintf("a packet of %d bytes beginning %q", len(p), p[:min(len(p), 16)])}
}

func parseErr(p []byte) (*ErrPacket, error) {
	if len(p) < 3 {
		return nil, &NotMySQLError{Seen: fmt.Sprintf("an ERR packet of %d bytes", len(p))}
	}
	e := &ErrPacket{Code: binary.LittleEndian.Uint16(p[1:3])}
	rest := p[3:]
	if len(rest) >= 6 && rest[0] == '#' {
		e.State, rest = string(rest[1:6]), rest[6:]
	}
	e.Message = string(rest)
	return e, nil
}

func parseGreeting(p []byte) (*Greeting, error) {
	bad := func(what string) error { return &NotMySQLError{Seen: "a HandshakeV10 " + what} }
	ver, rest, ok := bytes.Cut(p[1:], []byte{0})
	if !ok || len(rest) < 4+8+1+2 {
		return nil, bad("cut short")
	}
	g := &Greeting{Version: strings.TrimPrefix(string(ver), "5.5.5-"), ConnID: binary.LittleEndian.Uint32(rest)}
	g.Scramble = append([]byte(nil), rest[4:12]...)
	g.Caps = uint32(binary.LittleEndian.Uint16(rest[13:15]))
	rest = rest[15:]
	if len(rest) < 1+2+2+1+10 {
		return g, nil
	}
	g.Caps |= uint32(binary.LittleEndian.Uint16(rest[3:5])) << 16
	authLen := int(rest[5])
	rest = rest[16:]
	if g.Caps&capSecureConnection != 0 {
		n := max(13, authLen-8)
		if len(rest) < n {
			return nil, bad("with its scramble cut short")
		}
		g.Scramble = append(g.Scramble, bytes.TrimRight(rest[:n], "\x00")...)
		rest = rest[n:]
	}
	if g.Caps&capPluginAuth != 0 {
		name, _, _ := bytes.Cut(rest, []byte{0})
		g.Plugin = string(name)
	}
	return g, nil
}

// ErrUnsupportedPlugin is a server that asks for an authentication plugin
// the probe does not speak.
type ErrUnsupportedPlugin struct{ Plugin string }

func (e *ErrUnsupportedPlugin) Error() string {
	return fmt.Sprintf("the server asks for the authentication plugin %q, which healthctl does not speak (it speaks %s and %s)", e.Plugin, NativePassword, CachingSHA2)
}

// Login logs in as user with password (and db, when not ""), in answer
// to g, as the mysql client does over a clear connection. A refusal is
// the server's ERR packet (err nil); anything else that goes wrong is err.
func Login(r *bufio.Reader, w io.Writer, g *Greeting, user, password, db string) (*ErrPacket, error) {
	plugin := g.Plugin
	if plugin == "" {
		plugin = NativePassword
	}
	if plugin != NativePassword && plugin != CachingSHA2 {
		// Answer as mysql_native_password: the server switches to the
		// user's plugin (or refuses) in its answer.
		plugin = NativePassword
	}
	caps := uint32(capLongPassword | capProtocol41 | capTransactions | capSecureConnection | capPluginAuth)
	if db != "" {
		caps |= capConnectWithDB
	}
	caps &= g.Caps | capProtocol41 | capLongPassword | capTransactions
	auth := scramble(plugin, password, g.Scramble)
	p := binary.LittleEndian.AppendUint32(nil, caps)
	p = binary.LittleEndian.AppendUint32(p, 1<<24)
	p = append(p, 33) // utf8_general_ci
	p = append(p, make([]byte, 23)...)
	p = append(append(p, user...), 0)
	p = append(append(p, byte(len(auth))), auth...)
	if caps&capConnectWithDB != 0 {
		p = append(append(p, db...), 0)
	}
	if caps&capPluginAuth != 0 {
		p = append(append(p, plugin...), 0)
	}
	seq := byte(1)
	if err := writePacket(w, seq, p); err != nil {
		return nil, err
	}
	nonce := g.Scramble
	for range 8 {
		s, pkt, err := readPacket(r)
		if err != nil {
			return nil, err
		}
		seq = s + 1
		switch pkt[0] {
		case 0x00:
			return nil, nil
		case 0xff:
			return parseErr(pkt)
		case 0xfe:
			// Auth switch: the user's plugin, a new scramble.
			name, data, _ := bytes.Cut(pkt[1:], []byte{0})
			plugin, nonce = string(name), bytes.TrimRight(data, "\x00")
			if plugin != NativePassword && plugin != CachingSHA2 {
				return nil, &ErrUnsupportedPlugin{Plugin: plugin}
			}
			if err := writePacket(w, seq, scramble(plugin, password, nonce)); err != nil {
				return nil, err
			}
		case 0x01:
			more := pkt[1:]
			switch {
			case plugin == CachingSHA2 && len(more) == 1 && more[0] == 3:
				// Fast authentication succeeded: OK follows.
			case plugin == CachingSHA2 && len(more) == 1 && more[0] == 4:
				// Full authentication: over a clear connection, the
				// password goes encrypted with the server's RSA key.
				if err := writePacket(w, seq, []byte{2}); err != nil {
					return nil, err
				}
			case plugin == CachingSHA2 && bytes.HasPrefix(more, []byte("-----BEGIN")):
				enc, err := encryptPassword(more, password, nonce)
				if err != nil {
					return nil, err
				}
				if err := writePacket(w, seq, enc); err != nil {
					return nil, err
				}
			default:
				return nil, &NotMySQLError{Seen: fmt.Sprintf("authentication data %q from %s", more[:min(len(more), 16)], plugin)}
			}
		default:
			return nil, &NotMySQLError{Seen: fmt.Sprintf("a packet beginning %q in answer to the login", pkt[:min(len(pkt), 16)])}
		}
	}
	return nil, errors.New("the login went on for more than 8 exchanges")
}

// Ping sends COM_PING and reads its answer: nil for OK, the ERR packet.
func Ping(r *bufio.Reader, w io.Writer) (*ErrPacket, error) {
	if err := writePacket(w, 0, []byte{0x0e}); err != nil {
		return nil, err
	}
	_, p, err := readPacket(r)
	if err != nil {
		return nil, err
	}
	switch p[0] {
	case 0x00:
		return nil, nil
	case 0xff:
		return parseErr(p)
	}
	return nil, &NotMySQLError{Seen: fmt.Sprintf("a packet beginning %q in answer to COM_PING", p[:min(len(p), 16)])}
}

// Quit is COM_QUIT, the polite end of a session.
var Quit = []byte{1, 0, 0, 0, 1}

// scramble is the authentication response of plugin for password and the
// server's nonce (none for an empty password).
func scramble(plugin, password string, nonce []byte) []byte {
	if password == "" {
		return nil
	}
	nonce = nonce[:min(len(nonce), 20)]
	if plugin == CachingSHA2 {
		// SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce)
		p1 := sha256.Sum256([]byte(password))
		p2 := sha256.Sum256(p1[:])
		h := sha256.New()
		h.Write(p2[:])
		h.Write(nonce)
		return xor(p1[:], h.Sum(nil))
	}
	// SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw)))
	s1 := sha1.Sum([]byte(password))
	s2 := sha1.Sum(s1[:])
	h := sha1.New()
	h.Write(nonce)
	h.Write(s2[:])
	return xor(s1[:], h.Sum(nil))
}

// NativeScramble is mysql_native_password's response (for a server that
// checks one: the test fixture).
func NativeScramble(password string, nonce []byte) []byte {
	return scramble(NativePassword, password, nonce)
}

func xor(a, b []byte) []byte {
	out := make([]byte, len(a))
	for i := range a {
		out[i] = a[i] ^ b[i%len(b)]
	}
	return out
}

// encryptPassword is caching_sha2's full authentication over a clear
// connection: the password (NUL-terminated) XOR the nonce, encrypted with
// the server's RSA public key (OAEP, SHA-1).
func encryptPassword(pemKey []byte, password string, nonce []byte) ([]byte, error) {
	block, _ := pem.Decode(pemKey)
	if block == nil {
		return nil, errors.New("the server's RSA public key does not parse")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the server's RSA public key: %w", err)
	}
	pub, ok := key.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("the server's public key is not RSA")
	}
	return rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, xor(append([]byte(password), 0), nonce[:min(len(nonce), 20)]), nil)
}
