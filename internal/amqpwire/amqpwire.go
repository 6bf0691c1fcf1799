// Package amqpwire is the AMQP 0-9-1 side of an amqp:// probe, pure: the
// protocol header, the connection class's method frames a client sends
// (Start-Ok, Tune-Ok, Open, Close, Close-Ok) and the reading of the ones a
// server sends (Start, Tune, Open-Ok, Close, Close-Ok), field tables
// included, and what the URL names (credentials, virtual host) as the
// RabbitMQ URI specification and its clients (amqp091-go) read it. The
// probe carries the bytes.
package amqpwire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strings"
)

// Header is the protocol header of AMQP 0-9-1, the client's first bytes.
var Header = []byte("AMQP\x00\x00\x09\x01")

// The frame types.
const (
	FrameMethod    byte = 1
	FrameHeader    byte = 2
	FrameBody      byte = 3
	FrameHeartbeat byte = 8
	frameEnd       byte = 0xce
)

// MaxFrame is the longest frame read: a Connection.Start with its server
// properties is under 2 KiB from RabbitMQ; the spec's minimum frame-max is
// 4096, and nothing before Open-Ok is longer.
const MaxFrame = 64 << 10

// The connection class and its methods.
const (
	ClassConnection uint16 = 10

	MethodStart    uint16 = 10
	MethodStartOk  uint16 = 11
	MethodSecure   uint16 = 20
	MethodSecureOk uint16 = 21
	MethodTune     uint16 = 30
	MethodTuneOk   uint16 = 31
	MethodOpen     uint16 = 40
	MethodOpenOk   uint16 = 41
	MethodClose    uint16 = 50
	MethodCloseOk  uint16 = 51
)

// methodNames are the connection methods' names, as the spec writes them.
var methodNames = map[uint16]string{
	MethodStart: "Connection.Start", MethodStartOk: "Connection.Start-Ok",
	MethodSecure: "Connection.Secure", MethodSecureOk: "Connection.Secure-Ok",
	MethodTune: "Connection.Tune", MethodTuneOk: "Connection.Tune-Ok",
	MethodOpen: "Connection.Open", MethodOpenOk: "Connection.Open-Ok",
	MethodClose: "Connection.Close", MethodCloseOk: "Connection.Close-Ok",
}

// MethodName names a method ("Connection.Start", "method 20.10").
func MethodName(class, id uint16) string {
	if n, ok := methodNames[id]; ok && class == ClassConnection {
		return n
	}
	return fmt.Sprintf("method %d.%d", class, id)
}

// Frame is one frame as read: its type, channel and payload.
type Frame struct {
	Type    byte
	Channel uint16
	Payload []byte
}

// ProtocolHeaderError is a server that answered the protocol header with
// its own: it does not speak AMQP 0-9-1 (the spec's answer), and says
// what it speaks.
type ProtocolHeaderError struct {
	// ID, Major, Minor, Revision are the header's last four bytes
	// (AMQP 1.0: 0, 1, 0, 0; 0-9-1: 0, 0, 9, 1; 0-8: 1, 1, 8, 0).
	ID, Major, Minor, Revision byte
}

func (e *ProtocolHeaderError) Error() string {
	return "the server answered with its protocol header: it speaks " + e.Speaks()
}

// Speaks is what the header names: "AMQP 1-0-0", "AMQP 0-9-1"; a
// protocol id other than 0 is said too (AMQP 1.0's SASL layer is 3).
func (e *ProtocolHeaderError) Speaks() string {
	s := fmt.Sprintf("AMQP %d-%d-%d", e.Major, e.Minor, e.Revision)
	if e.ID != 0 {
		s += fmt.Sprintf(" (protocol id %d)", e.ID)
	}
	return s
}

// NotAMQPError is an answer that is not an AMQP frame: Seen is its first
// line, or its first bytes.
type NotAMQPError struct{ Seen string }

func (e *NotAMQPError) Error() string { return fmt.Sprintf("not an AMQP frame: %q", e.Seen) }

// ErrShort is a connection that ended inside a frame.
var ErrShort = errors.New("the connection ended inside an AMQP frame")

// ReadFrame reads one frame. A server's protocol header is a
// *ProtocolHeaderError, anything else that is no frame a *NotAMQPError;
// an EOF before the first byte is io.EOF, later ErrShort.
func ReadFrame(br *bufio.Reader) (Frame, error) {
	head, err := br.Peek(7)
	if len(head) > 0 && (head[0] == 'A' || !knownType(head[0])) {
		// A protocol header, or another protocol's answer.
		if hdr, herr := br.Peek(8); herr == nil && string(hdr[:4]) == "AMQP" {
			br.Discard(8)
			return Frame{}, &ProtocolHeaderError{ID: hdr[4], Major: hdr[5], Minor: hdr[6], Revision: hdr[7]}
		}
		return Frame{}, &NotAMQPError{Seen: seen(br)}
	}
	if err != nil {
		if len(head) > 0 && errors.Is(err, io.EOF) {
			return Frame{}, ErrShort
		}
		return Frame{}, err
	}
	size := binary.BigEndian.Uint32(head[3:7])
	if size > MaxFrame {
		return Frame{}, &NotAMQPError{Seen: seen(br)}
	}
	f := Frame{Type: head[0], Channel: binary.BigEndian.Uint16(head[1:3])}
	br.Discard(7)
	buf := make([]byte, int(size)+1)
	if _, err := io.ReadFull(br, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Frame{}, ErrShort
		}
		return Frame{}, err
	}
	if buf[size] != frameEnd {
		return Frame{}, &NotAMQPError{Seen: fmt.Sprintf("a frame of type %d whose end is %#x, not 0xce", f.Type, buf[size])}
	}
	f.Payload = buf[:size]
	return f, nil
}

func knownType(t byte) bool {
	return t == FrameMethod || t == FrameHeader || t == FrameBody || t == FrameHeartbeat
}

// seen is what is buffered of an answer that is not AMQP: its first line
// when it has one (an HTTP status line, an SSH banner), else its first
// bytes.
func seen(br *bufio.Reader) string {
	b, _ := br.Peek(min(br.Buffered(), 64))
	if len(b) == 0 {
		b, _ = br.Peek(1)
	}
	s := string(b)
	if i := strings.IndexAny(s, "\r\n"); i > 0 {
		s = s[:i]
	}
	return s
}

// Method is a method frame's method: its class, id and arguments.
type Method struct {
	Class, ID uint16
	Args      []byte
}

// Name is the method's name.
func (m Method) Name() string { return MethodName(m.Class, m.ID) }

// Is says m is the connection class's method id.
func (m Method) Is(id uint16) bool { return m.Class == ClassConnection && m.ID == id }

// ParseMethod reads a method frame's method.
func ParseMethod(f Frame) (Method, error) {
	if f.Type != FrameMethod || len(f.Payload) < 4 {
		return Method{}, &NotAMQPError{Seen: fmt.Sprintf("a frame of type %d and %d bytes where a method frame was due", f.Type, len(f.Payload))}
	}
	return Method{Class: binary.BigEndian.Uint16(f.Payload), ID: binary.BigEndian.Uint16(f.Payload[2:]), Args: f.Payload[4:]}, nil
}

// Start is Connection.Start: the server's protocol version, its
// properties (product, version, platform, cluster_name, capabilities), its
// SASL mechanisms and locales.
type Start struct {
	Major, Minor byte
	Properties   Table
	Mechanisms   string
	Locales      string
}

// ParseStart reads Connection.Start's arguments.
func ParseStart(args []byte) (Start, error) {
	d := decoder{b: args}
	var s Start
	s.Major, s.Minor = d.octet(), d.octet()
	s.Properties = d.table(0)
	s.Mechanisms, s.Locales = d.longstr(), d.longstr()
	return s, d.done("Connection.Start")
}

// HasMechanism says the server offers SASL mechanism m.
func (s Start) HasMechanism(m string) bool {
	for _, x := range strings.Fields(s.Mechanisms) {
		if x == m {
			return true
		}
	}
	return false
}

// Tune is Connection.Tune (and Tune-Ok): the limits the server proposes.
type Tune struct {
	ChannelMax uint16
	FrameMax   uint32
	Heartbeat  uint16
}

// ParseTune reads Connection.Tune's arguments.
func ParseTune(args []byte) (Tune, error) {
	d := decoder{b: args}
	t := Tune{ChannelMax: d.short(), FrameMax: d.long(), Heartbeat: d.short()}
	return t, d.done("Connection.Tune")
}

// Close is Connection.Close: the reply code and text, and the method that
// caused it (0.0 when none).
type Close struct {
	Code          uint16
	Text          string
	Class, Method uint16
}

// ParseClose reads Connection.Close's arguments.
func ParseClose(args []byte) (Close, error) {
	d := decoder{b: args}
	c := Close{Code: d.short(), Text: d.shortstr(), Class: d.short(), Method: d.short()}
	return c, d.done("Connection.Close")
}

// The reply codes a server closes a connection with (AMQP 0-9-1 §1.2).
var replyNames = map[uint16]string{
	200: "REPLY_SUCCESS", 311: "CONTENT_TOO_LARGE", 313: "NO_CONSUMERS", 320: "CONNECTION_FORCED",
	402: "INVALID_PATH", 403: "ACCESS_REFUSED", 404: "NOT_FOUND", 405: "RESOURCE_LOCKED",
	406: "PRECONDITION_FAILED", 501: "FRAME_ERROR", 502: "SYNTAX_ERROR", 503: "COMMAND_INVALID",
	504: "CHANNEL_ERROR", 505: "UNEXPECTED_FRAME", 506: "RESOURCE_ERROR", 530: "NOT_ALLOWED",
	540: "NOT_IMPLEMENTED", 541: "INTERNAL_ERROR",
}

// ReplyName names a reply code ("ACCESS_REFUSED"), "" for one the spec
// does not name.
func ReplyName(code uint16) string { return replyNames[code] }

// The frames a client sends.

// StartOk is Connection.Start-Ok with PLAIN credentials (RFC 4616:
// "\x00user\x00password") and the client properties: product, and the
// capabilities RabbitMQ reads — authentication_failure_close makes it
// answer refused credentials with Close 403 instead of closing the socket.
func StartOk(product, user, password string) []byte {
	if product == "" {
		product = "healthctl"
	}
	props := Table{
		"product": product,
		"capabilities": Table{
			"authentication_failure_close": true,
			"connection.blocked":           true,
		},
	}
	var e encoder
	e.table(props)
	e.shortstr("PLAIN")
	e.longstr("\x00" + user + "\x00" + password)
	e.shortstr("en_US")
	return methodFrame(MethodStartOk, e.b)
}

// TuneOk is Connection.Tune-Ok: the server's channel-max and frame-max,
// no heartbeats (the connection lives for one Open).
func TuneOk(t Tune) []byte {
	var e encoder
	e.short(t.ChannelMax)
	e.long(t.FrameMax)
	e.short(0)
	return methodFrame(MethodTuneOk, e.b)
}

// Open is Connection.Open for vhost.
func Open(vhost string) []byte {
	var e encoder
	e.shortstr(vhost)
	e.shortstr("") // reserved-1 (capabilities)
	e.b = append(e.b, 0)
	return methodFrame(MethodOpen, e.b)
}

// CloseFrame is Connection.Close with code and text (200 and "Goodbye":
// the client is done).
func CloseFrame(code uint16, text string) []byte {
	var e encoder
	e.short(code)
	e.shortstr(text)
	e.short(0)
	e.short(0)
	return methodFrame(MethodClose, e.b)
}

// CloseOk is Connection.Close-Ok, the answer to the server's Close.
func CloseOk() []byte { return methodFrame(MethodCloseOk, nil) }

// MethodFrame is a method frame of the connection class on channel 0 (a
// test server's too).
func MethodFrame(id uint16, args []byte) []byte { return methodFrame(id, args) }

func methodFrame(id uint16, args []byte) []byte {
	b := make([]byte, 0, 7+4+len(args)+1)
	b = append(b, FrameMethod, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(args)))
	b = binary.BigEndian.AppendUint16(b, ClassConnection)
	b = binary.BigEndian.AppendUint16(b, id)
	b = append(b, args...)
	return append(b, frameEnd)
}

// The URL.

// Login is what an amqp:// URL says of credentials: ok when it carries
// any (a user, with or without a password), as amqp091-go reads it. A URL
// without them is probed without logging in.
func Login(u *url.URL) (user, password string, ok bool) {
	if u.User == nil {
		return "", "", false
	}
	password, _ = u.User.Password()
	return u.User.Username(), password, true
}

// Vhost is the virtual host a URL names, as the clients read it
// (amqp091-go's ParseURI, pika's URLParameters): no path, or a lone "/",
// is the default vhost "/"; otherwise the path after its first "/",
// percent-decoded (so the default one, named, is /%2F too).
func Vhost(u *url.URL) string {
	if len(u.Path) <= 1 {
		return "/"
	}
	return strings.TrimPrefix(u.Path, "/")
}

// CheckPath refuses a path of more than one segment: a "/" inside a
// vhost's name is written %2F.
func CheckPath(u *url.URL) error {
	if strings.Contains(strings.TrimPrefix(u.EscapedPath(), "/"), "/") {
		return fmt.Errorf("%s URL's path %q is more than a virtual host (a / in its name is written %%2F; want %s://[USER[:PASSWORD]@]HOST[:PORT][/VHOST])", u.Scheme, u.EscapedPath(), u.Scheme)
	}
	if len(Vhost(u)) > 255 {
		return fmt.Errorf("%s URL's virtual host is longer than 255 bytes", u.Scheme)
	}
	return nil
}

// Fields.

// Table is a field table, decoded: strings, numbers, booleans, tables,
// arrays ([]any), nil for void.
type Table map[string]any

// String is the string value of key, "" when it is none.
func (t Table) String(key string) string {
	s, _ := t[key].(string)
	return s
}

// maxDepth bounds the nesting of tables and arrays read.
const maxDepth = 8

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		if d.err == nil {
			d.err = errors.New("truncated")
		}
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) octet() byte {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) short() uint16 {
	if b := d.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) long() uint32 {
	if b := d.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) longlong() uint64 {
	if b := d.take(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) shortstr() string { return string(d.take(int(d.octet()))) }

func (d *decoder) longstr() string {
	n := d.long()
	if n > uint32(len(d.b)) {
		d.take(len(d.b) + 1)
		return ""
	}
	return string(d.take(int(n)))
}

func (d *decoder) table(depth int) Table {
	n := d.long()
	if d.err != nil || n > uint32(len(d.b)) || depth > maxDepth {
		d.take(len(d.b) + 1)
		return nil
	}
	sub := decoder{b: d.take(int(n))}
	t := Table{}
	for len(sub.b) > 0 && sub.err == nil {
		k := sub.shortstr()
		t[k] = sub.value(depth)
	}
	if sub.err != nil {
		d.err = sub.err
	}
	return t
}

func (d *decoder) array(depth int) []any {
	n := d.long()
	if d.err != nil || n > uint32(len(d.b)) || depth > maxDepth {
		d.take(len(d.b) + 1)
		return nil
	}
	sub := decoder{b: d.take(int(n))}
	var a []any
	for len(sub.b) > 0 && sub.err == nil {
		a = append(a, sub.value(depth))
	}
	if sub.err != nil {
		d.err = sub.err
	}
	return a
}

// value is one field value, by its type octet (RabbitMQ's types, which
// its clients use: the spec's errata).
func (d *decoder) value(depth int) any {
	switch t := d.octet(); t {
	case 't':
		return d.octet() != 0
	case 'b':
		return int64(int8(d.octet()))
	case 'B':
		return int64(d.octet())
	case 's':
		return int64(int16(d.short()))
	case 'u':
		return int64(d.short())
	case 'I':
		return int64(int32(d.long()))
	case 'i':
		return int64(d.long())
	case 'l':
		return int64(d.longlong())
	case 'f':
		return float64(math.Float32frombits(d.long()))
	case 'd':
		return math.Float64frombits(d.longlong())
	case 'D':
		scale := d.octet()
		v := int32(d.long())
		return float64(v) / math.Pow10(int(scale))
	case 'S', 'x':
		return d.longstr()
	case 'A':
		return d.array(depth + 1)
	case 'T':
		return int64(d.longlong())
	case 'F':
		return d.table(depth + 1)
	case 'V':
		return nil
	default:
		if d.err == nil {
			d.err = fmt.Errorf("unknown field type %q", t)
		}
		return nil
	}
}

func (d *decoder) done(what string) error {
	if d.err != nil {
		return &NotAMQPError{Seen: fmt.Sprintf("a %s whose arguments do not parse (%v)", what, d.err)}
	}
	return nil
}

type encoder struct{ b []byte }

func (e *encoder) short(v uint16) { e.b = binary.BigEndian.AppendUint16(e.b, v) }
func (e *encoder) long(v uint32)  { e.b = binary.BigEndian.AppendUint32(e.b, v) }

func (e *encoder) shortstr(s string) {
	if len(s) > 255 {
		s = s[:255]
	}
	e.b = append(append(e.b, byte(len(s))), s...)
}

func (e *encoder) longstr(s string) {
	e.long(uint32(len(s)))
	e.b = append(e.b, s...)
}

// table writes t with its keys sorted (the bytes are the same each time).
func (e *encoder) table(t Table) {
	var body encoder
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		body.shortstr(k)
		switch v := t[k].(type) {
		case string:
			body.b = append(body.b, 'S')
			body.longstr(v)
		case bool:
			b := byte(0)
			if v {
				b = 1
			}
			body.b = append(body.b, 't', b)
		case int64:
			body.b = append(body.b, 'l')
			body.b = binary.BigEndian.AppendUint64(body.b, uint64(v))
		case Table:
			body.b = append(body.b, 'F')
			body.table(v)
		default:
			body.b = append(body.b, 'V')
		}
	}
	e.long(uint32(len(body.b)))
	e.b = append(e.b, body.b...)
}

// EncodeStart is Connection.Start's arguments (a test server's).
func EncodeStart(s Start) []byte {
	var e encoder
	e.b = append(e.b, s.Major, s.Minor)
	e.table(s.Properties)
	e.longstr(s.Mechanisms)
	e.longstr(s.Locales)
	return e.b
}

// EncodeTune is Connection.Tune's arguments (a test server's).
func EncodeTune(t Tune) []byte {
	var e encoder
	e.short(t.ChannelMax)
	e.long(t.FrameMax)
	e.short(t.Heartbeat)
	return e.b
}

// EncodeClose is Connection.Close's arguments (a test server's).
func EncodeClose(c Close) []byte {
	var e encoder
	e.short(c.Code)
	e.shortstr(c.Text)
	e.short(c.Class)
	e.short(c.Method)
	return e.b
}

// ParseStartOk reads Connection.Start-Ok's arguments: the mechanism and
// PLAIN's user and password (a test server's).
func ParseStartOk(args []byte) (props Table, mechanism, user, password string, err error) {
	d := decoder{b: args}
	props = d.table(0)
	mechanism = d.shortstr()
	resp := d.longstr()
	d.shortstr()
	if err := d.done("Connection.Start-Ok"); err != nil {
		return nil, "", "", "", err
	}
	parts := strings.SplitN(resp, "\x00", 3)
	if len(parts) == 3 {
		user, password = parts[1], parts[2]
	}
	return props, mechanism, user, password, nil
}

// ParseOpen reads Connection.Open's virtual host (a test server's).
func ParseOpen(args []byte) (string, error) {
	d := decoder{b: args}
	v := d.shortstr()
	return v, d.done("Connection.Open")
}
