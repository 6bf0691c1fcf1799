package classify

import (
	"errors"
	"strings"
	"testing"
)

// TestH2Answer: an HTTP/1.1 exchange that read an HTTP/2 SETTINGS frame
// says so and names --http2-prior-knowledge; other malformed answers do not.
func TestH2Answer(t *testing.T) {
	for _, tt := range []struct {
		name, err string
		hint      bool
	}{
		{"SETTINGS then GOAWAY (nghttpd without TLS)", `net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00d\x00\x00\b\a\x00\x00\x00\x00\x00"`, true},
		{"an empty SETTINGS frame", `malformed HTTP response "\x00\x00\x00\x04\x00\x00\x00\x00\x00"`, true},
		{"SETTINGS ACK", `malformed HTTP response "\x00\x00\x00\x04\x01\x00\x00\x00\x00"`, true},
		{"a DATA frame", `malformed HTTP response "\x00\x00\x06\x00\x00\x00\x00\x00\x01hello!"`, false},
		{"SETTINGS on a stream", `malformed HTTP response "\x00\x00\x06\x04\x00\x00\x00\x00\x01\x00\x03\x00\x00\x00d"`, false},
		{"a length that is no setting", `malformed HTTP response "\x00\x00\x05\x04\x00\x00\x00\x00\x00abcde"`, false},
		{"short", `malformed HTTP response "\x00\x00\x06\x04"`, false},
		{"SSH", `malformed HTTP response "SSH-2.0-OpenSSH_9.6"`, false},
		{"no quote", `malformed HTTP response`, false},
		{"reset", `read: connection reset by peer`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Sentence(Observation{Err: errors.New(tt.err)}, ProtocolError, Facts{})
			if has := strings.Contains(got, "--http2-prior-knowledge"); has != tt.hint {
				t.Errorf("Sentence = %q: hint %v, want %v", got, has, tt.hint)
			}
			if !strings.HasPrefix(got, ErrorText(errors.New(tt.err))) {
				t.Errorf("Sentence = %q: does not begin with the error", got)
			}
		})
	}
}
