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

// methodNames are the connection methods' names, as the spec writes them:
// a table the linker lays out (a map literal is built at every start,
// probe included).
var methodNames = [...]struct {
	id   uint16
	name string
}{
	{MethodStart, "Connection.Start"}, {MethodStartOk, "Connection.Start-Ok"},
	{MethodSecure, "Connection.Secure"}, {MethodSecureOk, "Connection.Secure-Ok"},
	{MethodTune, "Connection.Tune"}, {MethodTuneOk, "Connection.Tune-Ok"},
	{MethodOpen, "Connection.Open"}, {MethodOpenOk, "Connection.Open-Ok"},
	{MethodClose, "Connection.Close"}, {MethodCloseOk, "Connection.Close-Ok"},
}

// MethodName names a method ("Connection.Start", "method 20.10").
func MethodName(class, id uint16) string {
	for _, m := range methodNames {
		if m.id == id && class == ClassConnection {
			return m.name
		}
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

// The reply codes a server closes a connection with (AMQP 0-9-1 §1.2), a
// table as methodNames.
var replyNames = [...]struct {
	code uint16
	name string
}{
	{200, "REPLY_SUCCESS"}, {311, "CONTENT_TOO_LARGE"}, {313, "NO_CONSUMERS"}, {320, "CONNECTION_FORCED"},
	{402, "INVALID_PATH"}, {403, "ACCESS_REFUSED"}, {404, "NOT_FOUND"}, {405, "RESOURCE_LOCKED"},
	{406, "PRECONDITION_FAILED"}, {501, "FRAME_ERROR"}, {502, "SYNTAX_ERROR"}, {503, "COMMAND_INVALID"},
	{504, "CHANNEL_ERROR"}, {505, "UNEXPECTED_FRAME"}, {506, "RESOURCE_ERROR"}, {530, "NOT_ALLOWED"},
	{540, "NOT_IMPLEMENTED"}, {541, "INTERNAL_ERROR"},
}

// ReplyName names a reply code ("ACCESS_REFUSED"), "" for one the spec
// does not name.
func ReplyName(code uint16) string {
	for _, r := range replyNames {
		if r.code == code {
			return r.name
		}
	}
	return ""
}
