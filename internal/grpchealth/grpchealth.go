// Package grpchealth is the wire side of the gRPC health protocol
// (grpc.health.v1.Health/Check), pure: the request message and its framing,
// the response's decoding, grpc-timeout and grpc-message encodings, the
// status and code names, and the reading of an HTTP/2 answer into what the
// call said. internal/probe carries the call over net/http's HTTP/2 —
// instead of grpc-go, whose package initialisation every command would pay
// at start and whose code would grow the binary — and the few bytes of protobuf
// are encoded here by hand (see EncodeRequest for why not protowire).
package grpchealth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Path is the HTTP/2 path of the health service's Check method.
const Path = "/grpc.health.v1.Health/Check"

// The serving statuses of grpc.health.v1.HealthCheckResponse.
const (
	Unknown        = 0
	Serving        = 1
	NotServing     = 2
	ServiceUnknown = 3
)

// The gRPC status codes the health check treats on their own.
const (
	CodeOK            = 0
	CodeNotFound      = 5
	CodeUnimplemented = 12
	CodeUnavailable   = 14
)

// codeNames are the canonical names of the gRPC status codes.
var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
	"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// CodeName is a status code's canonical name ("UNIMPLEMENTED"), or
// "CODE_n" for a code outside the standard set.
func CodeName(code int) string {
	if code >= 0 && code < len(codeNames) {
		return codeNames[code]
	}
	return "CODE_" + strconv.Itoa(code)
}

// statusNames are the names of the serving statuses.
var statusNames = [...]string{"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"}

// StatusName is a serving status's name ("NOT_SERVING"), or its number
// for a value this version does not know.
func StatusName(s int) string {
	if s >= 0 && s < len(statusNames) {
		return statusNames[s]
	}
	return strconv.Itoa(s)
}

// Info is what a health call answered. Status is set only when the call
// returned OK with a response message.
type Info struct {
	// Service is the service whose health was asked ("" is the server's
	// overall health).
	Service string `json:"service"`
	// Status is the serving status's name ("SERVING", "NOT_SERVING", …),
	// "" when no response message came.
	Status string `json:"status,omitempty"`
	// Code is the grpc-status code, nil when none arrived.
	Code *int `json:"code,omitempty"`
	// CodeName is Code's canonical name ("UNIMPLEMENTED").
	CodeName string `json:"code_name,omitempty"`
	// Message is the grpc-message the server sent (redacted, decoded).
	Message string `json:"message,omitempty"`
}

// Answer is a health call's response as read: what it said, or the
// first way in which it was not gRPC at all (Protocol, the thing seen).
type Answer struct {
	Info Info
	// Serving is the decoded serving status (valid with a code of OK and
	// a message).
	Serving int
	// HasMessage is true when a response message was decoded.
	HasMessage bool
	// Protocol says why the answer is not a gRPC one, with what was seen
	// ("content-type \"text/html\"", "HTTP/1.1 answer"); "" when it is.
	Protocol string
}

// EncodeRequest frames a HealthCheckRequest{service}: the 5-byte gRPC
// prefix (not compressed, big-endian length) and the protobuf message,
// whose only field is the string 1 (tag 0x0a, varint length, bytes); an
// empty service is the empty message, as protobuf omits default values.
//
// Written by hand rather than with protobuf's protowire: the message is one
// field, and linking protowire brings protobuf's internal packages, whose
// initialisation hashes the running executable at start (measured in
// docs/benchmarks.md).
func EncodeRequest(service string) []byte {
	var msg []byte
	if service != "" {
		msg = append(msg, 0x0a)
		msg = appendVarint(msg, uint64(len(service)))
		msg = append(msg, service...)
	}
	return Frame(msg)
}

// Frame is msg as one uncompressed gRPC message: a zero flag byte, the
// length (4 bytes, big-endian), the bytes. An empty msg is the empty
// request (google.protobuf.Empty, or any message whose fields all
// default): 0 0 0 0 0.
func Frame(msg []byte) []byte {
	out := make([]byte, 5, 5+len(msg))
	putUint32(out[1:], uint32(len(msg)))
	return append(out, msg...)
}

func putUint32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// errVarint is a varint that runs past the end of its message or past 64 bits.
var errVarint = errors.New("bad varint")

func consumeVarint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			if i == 9 && b[i] > 1 {
				return 0, 0, errVarint
			}
			return v, i + 1, nil
		}
	}
	return 0, 0, errVarint
}

// DecodeResponse reads a HealthCheckResponse message: field 1 (varint)
// is the serving status; any other field is skipped as protobuf requires
// of unknown fields (a newer server may add some); the last occurrence of
// field 1 wins. A missing field 1 is UNKNOWN (protobuf's default).
func DecodeResponse(msg []byte) (int, error) {
	status := uint64(Unknown)
	for len(msg) > 0 {
		tag, n, err := consumeVarint(msg)
		if err != nil {
			return 0, fmt.Errorf("field tag: %w", err)
		}
		msg = msg[n:]
		field, wire := tag>>3, tag&7
		if field == 0 {
			return 0, errors.New("field number 0")
		}
		switch wire {
		case 0: // varint
			v, n, err := consumeVarint(msg)
			if err != nil {
				return 0, fmt.Errorf("field %d: %w", field, err)
			}
			msg = msg[n:]
			if field == 1 {
				status = v
			}
		case 1: // 64-bit
			if len(msg) < 8 {
				return 0, fmt.Errorf("field %d: truncated", field)
			}
			msg = msg[8:]
		case 2: // length-delimited
			l, n, err := consumeVarint(msg)
			if err != nil || l > uint64(len(msg)-n) {
				return 0, fmt.Errorf("field %d: truncated", field)
			}
			msg = msg[n+int(l):]
		case 5: // 32-bit
			if len(msg) < 4 {
				return 0, fmt.Errorf("field %d: truncated", field)
			}
			msg = msg[4:]
		default:
			return 0, fmt.Errorf("field %d: wire type %d", field, wire)
		}
		if field == 1 && wire != 0 {
			return 0, fmt.Errorf("field 1 (status): wire type %d, want varint", wire)
		}
	}
	if status > 1<<31-1 {
		return 0, fmt.Errorf("status %d out of range", status)
	}
	return int(status), nil
}

// Messages splits a response body into its length-prefixed messages.
// A body that ends inside a prefix or a message is an error: the stream was
// cut short or is not gRPC.
func Messages(body []byte) (msgs [][]byte, compressed bool, err error) {
	for len(body) > 0 {
		if len(body) < 5 {
			return nil, false, fmt.Errorf("message prefix cut short (%d of 5 bytes)", len(body))
		}
		flag := body[0]
		if flag > 1 {
			return nil, false, fmt.Errorf("message flag %d (want 0 or 1)", flag)
		}
		n := uint64(body[1])<<24 | uint64(body[2])<<16 | uint64(body[3])<<8 | uint64(body[4])
		if n > uint64(len(body)-5) {
			return nil, false, fmt.Errorf("message cut short (%d of %d bytes)", len(body)-5, n)
		}
		compressed = compressed || flag == 1
		msgs = append(msgs, body[5:5+n])
		body = body[5+n:]
	}
	return msgs, compressed, nil
}

// Timeout formats d as a grpc-timeout header value: at most eight
// digits and a unit, rounded up so the server never sees less time than the
// probe gives it.
func Timeout(d time.Duration) string {
	if d <= 0 {
		return "1n"
	}
	units := []struct {
		d time.Duration
		u string
	}{{time.Nanosecond, "n"}, {time.Microsecond, "u"}, {time.Millisecond, "m"}, {time.Second, "S"}, {time.Minute, "M"}, {time.Hour, "H"}}
	for _, u := range units {
		v := (d + u.d - 1) / u.d
		if v < 1e8 {
			return strconv.FormatInt(int64(v), 10) + u.u
		}
	}
	return "99999999H"
}

// UnescapeMessage decodes grpc-message's percent-encoding; a malformed
// escape is kept as it came.
func UnescapeMessage(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// NewRequest builds the Check call to u's host asking about service, over
// TLS when secure, telling the server how long the call may take.
func NewRequest(ctx context.Context, u *url.URL, secure bool, service string, timeout time.Duration, userAgent string) (*http.Request, error) {
	return NewCall(ctx, u, secure, Path, EncodeRequest(service), timeout, userAgent)
}

// NewCall builds a unary call of method (/pkg.Service/Method) to u's host
// with framed (one message, Frame) as its request, over TLS when secure,
// telling the server how long the call may take: the health probe's Check
// and drain-test's in-flight call alike.
func NewCall(ctx context.Context, u *url.URL, secure bool, method string, framed []byte, timeout time.Duration, userAgent string) (*http.Request, error) {
	scheme := "http"
	if secure {
		scheme = "https"
	}
	target := &url.URL{Scheme: scheme, Host: u.Host, Path: method}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(framed))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	if timeout > 0 {
		req.Header.Set("Grpc-Timeout", Timeout(timeout))
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	return req, nil
}

// ServiceOf is the service a grpc:// URL names in its path ("" for the
// server's overall health): the path without its leading slash.
func ServiceOf(u *url.URL) string {
	return strings.TrimPrefix(u.Path, "/")
}

// Protocols is the one protocol a health call may use: HTTP/2, over
// cleartext (prior knowledge, no upgrade) or over TLS (ALPN h2).
func Protocols(secure bool) *http.Protocols {
	p := new(http.Protocols)
	if secure {
		p.SetHTTP2(true)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	return p
}

// MaxBody bounds what a health answer may be: the response is a few
// bytes; anything this large is not a health response.
const MaxBody = 64 << 10

// Read reads a health call's response: the body (bounded), then the
// status from the trailers, or from the headers of a trailers-only answer.
// err is the read error (the stream reset or cut, a window closing); the
// answer says what was understood before it.
func Read(resp *http.Response, service string) (Answer, error) {
	a := Answer{Info: Info{Service: service}}
	if resp.ProtoMajor != 2 {
		a.Protocol = fmt.Sprintf("the server answered %s, not HTTP/2 (status %d)", resp.Proto, resp.StatusCode)
		return a, nil
	}
	ct := resp.Header.Get("Content-Type")
	grpcType := ct == "application/grpc" || strings.HasPrefix(ct, "application/grpc+") || strings.HasPrefix(ct, "application/grpc;")
	if !grpcType {
		if ct == "" {
			ct = "none"
		} else {
			ct = strconv.Quote(ct)
		}
		a.Protocol = fmt.Sprintf("HTTP/2 status %d with content-type %s, not application/grpc", resp.StatusCode, ct)
		return a, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return a, err
	}
	if len(body) > MaxBody {
		a.Protocol = fmt.Sprintf("response larger than %d bytes", MaxBody)
		return a, nil
	}
	st, msg := CallStatus(resp)
	if st == "" {
		if resp.StatusCode != http.StatusOK {
			a.Protocol = fmt.Sprintf("HTTP/2 status %d without grpc-status", resp.StatusCode)
		} else {
			a.Protocol = "no grpc-status in the trailers"
		}
		return a, nil
	}
	code, cerr := strconv.Atoi(st)
	if cerr != nil || code < 0 {
		a.Protocol = fmt.Sprintf("grpc-status %q is not a number", st)
		return a, nil
	}
	a.Info.Code = &code
	a.Info.CodeName = CodeName(code)
	a.Info.Message = UnescapeMessage(msg)
	if code != CodeOK {
		return a, nil
	}
	msgs, compressed, merr := Messages(body)
	switch {
	case merr != nil:
		a.Protocol = merr.Error()
		return a, nil
	case compressed:
		a.Protocol = "compressed response message (none was asked for)"
		return a, nil
	case len(msgs) != 1:
		a.Protocol = fmt.Sprintf("%d response messages to a unary call, want 1", len(msgs))
		return a, nil
	}
	s, derr := DecodeResponse(msgs[0])
	if derr != nil {
		a.Protocol = "response message: " + derr.Error()
		return a, nil
	}
	a.Serving, a.HasMessage = s, true
	a.Info.Status = StatusName(s)
	return a, nil
}

// CallStatus is a call's grpc-status and grpc-message, as its answer
// carries them once the body has been read to its end: in the trailers,
// or, in a trailers-only answer, in its headers.
func CallStatus(resp *http.Response) (status, message string) {
	// Trailers are complete once the body has been read to its end; a
	// trailers-only answer carries the status in its headers instead.
	status, message = resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if status == "" {
		status, message = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	return status, message
}
