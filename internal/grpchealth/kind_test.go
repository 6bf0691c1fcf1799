package grpchealth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
)

// TestReason holds the gRPC kind's answers and errors to their reasons,
// with the classifier's generic order of checks around them.
func TestReason(t *testing.T) {
	code := func(c int) *int { return &c }
	read := func(err error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", err)}
	}
	dial := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	ok := func(serving int) *Reply {
		return &Reply{Read: true, HasMessage: true, Serving: serving, Info: Info{Code: code(CodeOK), CodeName: "OK"}}
	}
	failed := func(err error, stage classify.Stage, noPreface bool) classify.Observation {
		return classify.Observation{Kind: Kind, Answer: &Reply{}, Err: err, Stage: stage, Refuted: Refutes(err, noPreface)}
	}
	for _, c := range []struct {
		name string
		obs  classify.Observation
		want classify.Reason
	}{
		{"serving", classify.Observation{Kind: Kind, Answer: ok(Serving)}, classify.OK},
		{"not serving", classify.Observation{Kind: Kind, Answer: ok(NotServing)}, ReasonNotServing},
		{"status UNKNOWN", classify.Observation{Kind: Kind, Answer: ok(Unknown)}, ReasonNotServing},
		{"status from a newer server", classify.Observation{Kind: Kind, Answer: ok(9)}, ReasonNotServing},
		{"SERVICE_UNKNOWN", classify.Observation{Kind: Kind, Answer: ok(ServiceUnknown)}, ReasonServiceUnknown},
		{"NOT_FOUND", classify.Observation{Kind: Kind, Answer: &Reply{Read: true, Info: Info{Code: code(5)}}}, ReasonServiceUnknown},
		{"UNIMPLEMENTED", classify.Observation{Kind: Kind, Answer: &Reply{Read: true, Info: Info{Code: code(12)}}}, ReasonUnimplemented},
		{"UNAVAILABLE", classify.Observation{Kind: Kind, Answer: &Reply{Read: true, Info: Info{Code: code(14)}}}, ReasonStatus},
		{"not grpc", classify.Observation{Kind: Kind, Answer: &Reply{Read: true, Seen: "content-type text/html", Info: Info{Code: code(0)}}}, ReasonProtocol},
		{"OK without a message", classify.Observation{Kind: Kind, Answer: &Reply{Read: true, Info: Info{Code: code(0)}}}, ReasonProtocol},
		{"no grpc-status", classify.Observation{Kind: Kind, Answer: &Reply{Read: true, HasMessage: true}}, ReasonProtocol},
		{"nothing read", classify.Observation{Kind: Kind, Answer: &Reply{}}, ReasonProtocol},
		{"no answer at all", classify.Observation{Kind: Kind}, ReasonProtocol},
		{"to an HTTP/1 server", failed(errors.New("http2: failed reading the frame payload: http2: frame too large, note that the frame header looked like an HTTP/1.1 header"), classify.StageHeaders, false), ReasonProtocol},
		{"EOF before the preface", failed(errors.New("unexpected EOF"), classify.StageHeaders, false), ReasonProtocol},
		{"grpcs without ALPN h2", failed(&net.OpError{Op: "remote error", Err: errors.New("tls: no application protocol")}, classify.StageTLS, false), ReasonProtocol},
		{"grpcs client cert alert", failed(&net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}, classify.StageHeaders, false), classify.TLSClientCertRequired},
		{"reset before the preface", failed(read(syscall.ECONNRESET), classify.StageHeaders, true), ReasonProtocol},
		{"reset after the preface", failed(read(syscall.ECONNRESET), classify.StageHeaders, false), classify.ConnReset},
		{"grpcs no h2 selected", failed(fmt.Errorf("x: %w", ErrNoHTTP2), classify.StageTLS, false), ReasonProtocol},
		{"refused", failed(dial(syscall.ECONNREFUSED), classify.StageConnect, false), classify.ConnRefused},
		{"headers window", classify.Observation{Kind: Kind, Answer: &Reply{}, Err: errors.New("x"), WindowClosed: true, Stage: classify.StageHeaders, Refuted: true}, classify.HeadersTimeout},
		{"tls unknown authority", failed(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, classify.StageTLS, false), classify.TLSUnknownAuthority},
	} {
		if o, r := classify.Classify(c.obs); r != c.want || o != c.want.Outcome() {
			t.Errorf("%s: %s %s, want %s", c.name, o, r, c.want)
		}
	}
}
