package grpchealth

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestGRPCEncodeRequest pins the bytes of HealthCheckRequest, as protoc's
// Go output marshals them (checked against grpc-go's health server in the
// probe tests: it decodes these bytes).
func TestGRPCEncodeRequest(t *testing.T) {
	long := strings.Repeat("s", 200) // a length that needs a two-byte varint
	cases := []struct {
		service string
		want    []byte
	}{
		{"", []byte{0, 0, 0, 0, 0}},
		{"a", []byte{0, 0, 0, 0, 3, 0x0a, 1, 'a'}},
		{"grpc.health.v1.Health", append([]byte{0, 0, 0, 0, 23, 0x0a, 21}, "grpc.health.v1.Health"...)},
		{long, append([]byte{0, 0, 0, 0, 203, 0x0a, 0xc8, 0x01}, long...)},
	}
	for _, c := range cases {
		if got := EncodeRequest(c.service); !bytes.Equal(got, c.want) {
			t.Errorf("%.20q: got % x, want % x", c.service, got, c.want)
		}
	}
}

func TestGRPCDecodeResponse(t *testing.T) {
	cases := []struct {
		name string
		msg  []byte
		want int
		err  string
	}{
		{"empty is UNKNOWN (the default)", nil, Unknown, ""},
		{"serving", []byte{0x08, 1}, Serving, ""},
		{"not serving", []byte{0x08, 2}, NotServing, ""},
		{"service unknown", []byte{0x08, 3}, ServiceUnknown, ""},
		{"a value from a newer server", []byte{0x08, 7}, 7, ""},
		{"last occurrence wins", []byte{0x08, 2, 0x08, 1}, Serving, ""},
		{"unknown varint field skipped", []byte{0x10, 0x96, 0x01, 0x08, 1}, Serving, ""},
		{"unknown bytes field skipped", []byte{0x12, 2, 'h', 'i', 0x08, 1}, Serving, ""},
		{"unknown fixed fields skipped", []byte{0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x25, 1, 2, 3, 4, 0x08, 1}, Serving, ""},
		{"truncated varint", []byte{0x08, 0x80}, 0, "bad varint"},
		{"truncated bytes field", []byte{0x12, 5, 'h'}, 0, "truncated"},
		{"truncated fixed64", []byte{0x19, 1}, 0, "truncated"},
		{"status not a varint", []byte{0x0a, 1, 1}, 0, "want varint"},
		{"field 0", []byte{0x00, 1}, 0, "field number 0"},
		{"group wire type", []byte{0x0b}, 0, "wire type 3"},
		{"overlong varint", []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 0, "bad varint"},
		{"out of range", []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0x0f}, 0, "out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeResponse(c.msg)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func TestGRPCMessages(t *testing.T) {
	cases := []struct {
		name       string
		body       []byte
		n          int
		compressed bool
		err        string
	}{
		{"none", nil, 0, false, ""},
		{"one", []byte{0, 0, 0, 0, 2, 0x08, 1}, 1, false, ""},
		{"empty message", []byte{0, 0, 0, 0, 0}, 1, false, ""},
		{"two", []byte{0, 0, 0, 0, 2, 0x08, 1, 0, 0, 0, 0, 0}, 2, false, ""},
		{"compressed", []byte{1, 0, 0, 0, 1, 9}, 1, true, ""},
		{"prefix cut", []byte{0, 0, 0}, 0, false, "prefix cut short"},
		{"message cut", []byte{0, 0, 0, 0, 9, 1}, 0, false, "message cut short (1 of 9 bytes)"},
		{"bad flag", []byte("<html>"), 0, false, "flag 60"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs, comp, err := Messages(c.body)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil || len(msgs) != c.n || comp != c.compressed {
				t.Fatalf("got %d messages, compressed %v, %v", len(msgs), comp, err)
			}
		})
	}
}

func TestGRPCTimeout(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "1n"},
		{-time.Second, "1n"},
		{1, "1n"},
		{2 * time.Second, "2000000u"},
		{1500 * time.Microsecond, "1500000n"},
		{99999999, "99999999n"},
		{100000000, "100000u"},
		{time.Hour * 24 * 365 * 100, "52560000M"},
		{100*time.Second + 1, "100001m"},
	}
	for _, c := range cases {
		if got := Timeout(c.d); got != c.want {
			t.Errorf("%v: got %s, want %s", c.d, got, c.want)
		}
	}
}

func TestGRPCUnescapeMessage(t *testing.T) {
	for in, want := range map[string]string{
		"unknown service":       "unknown service",
		"caf%C3%A9 100%25":      "café 100%",
		"bad %zz escape and %4": "bad %zz escape and %4",
		"%0A%1B[31m":            "\n\x1b[31m", // escaped later, as all server text
	} {
		if got := UnescapeMessage(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// TestReadGRPC covers the answers that are not gRPC and the trailers-only
// form, built as net/http hands them over.
func TestReadGRPC(t *testing.T) {
	ok := []byte{0, 0, 0, 0, 2, 0x08, 1}
	resp := func(proto int, status int, ct string, body []byte, hdr, trailer map[string]string) *http.Response {
		r := &http.Response{ProtoMajor: proto, Proto: "HTTP/2.0", StatusCode: status, Header: http.Header{}, Trailer: http.Header{}, Body: readCloser{bytes.NewReader(body)}}
		if proto == 1 {
			r.Proto = "HTTP/1.1"
		}
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		for k, v := range trailer {
			r.Trailer.Set(k, v)
		}
		return r
	}
	cases := []struct {
		name     string
		r        *http.Response
		protocol string
		code     int
		status   string
	}{
		{"serving", resp(2, 200, "application/grpc", ok, nil, map[string]string{"Grpc-Status": "0"}), "", 0, "SERVING"},
		{"grpc+proto", resp(2, 200, "application/grpc+proto", ok, nil, map[string]string{"Grpc-Status": "0"}), "", 0, "SERVING"},
		{"trailers-only", resp(2, 200, "application/grpc", nil, map[string]string{"Grpc-Status": "12", "Grpc-Message": "unknown%20service"}, nil), "", 12, ""},
		{"HTTP/1", resp(1, 200, "text/html", nil, nil, nil), "HTTP/1.1, not HTTP/2", -1, ""},
		{"html", resp(2, 404, "text/html", []byte("<html>"), nil, nil), `content-type "text/html"`, -1, ""},
		{"no content type", resp(2, 200, "", nil, nil, nil), "content-type none", -1, ""},
		{"no status", resp(2, 200, "application/grpc", ok, nil, nil), "no grpc-status", -1, ""},
		{"bad status", resp(2, 200, "application/grpc", ok, nil, map[string]string{"Grpc-Status": "x"}), "not a number", -1, ""},
		{"no message", resp(2, 200, "application/grpc", nil, nil, map[string]string{"Grpc-Status": "0"}), "0 response messages", 0, ""},
		{"compressed", resp(2, 200, "application/grpc", []byte{1, 0, 0, 0, 2, 0x08, 1}, nil, map[string]string{"Grpc-Status": "0"}), "compressed", 0, ""},
		{"garbage message", resp(2, 200, "application/grpc", []byte{0, 0, 0, 0, 1, 0x80}, nil, map[string]string{"Grpc-Status": "0"}), "response message: field tag", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := Read(c.r, "")
			if err != nil {
				t.Fatal(err)
			}
			if c.protocol != "" {
				if !strings.Contains(a.Protocol, c.protocol) {
					t.Fatalf("protocol %q, want it to contain %q", a.Protocol, c.protocol)
				}
				return
			}
			if a.Protocol != "" {
				t.Fatalf("unexpected protocol problem %q", a.Protocol)
			}
			if a.Info.Code == nil || *a.Info.Code != c.code || a.Info.Status != c.status {
				t.Fatalf("got %+v", a.Info)
			}
		})
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
