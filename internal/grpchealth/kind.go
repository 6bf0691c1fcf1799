package grpchealth

// grpc:// and grpcs:// as a kind: its reasons, and the answer its exchange
// hands the classifier, the report and drain-test (classify.Answer).

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/healthctl/healthctl/internal/classify"
)

// The reasons of a gRPC health answer (all unreachable).
const (
	// ReasonNotServing is a health answer other than SERVING: NOT_SERVING,
	// or UNKNOWN (or a status this version does not know).
	ReasonNotServing classify.Reason = "grpc_not_serving"
	// ReasonServiceUnknown is SERVICE_UNKNOWN, or NOT_FOUND: the health
	// service does not know the service asked about.
	ReasonServiceUnknown classify.Reason = "grpc_service_unknown"
	// ReasonUnimplemented is UNIMPLEMENTED: the server has no health
	// service.
	ReasonUnimplemented classify.Reason = "grpc_unimplemented"
	// ReasonStatus is any other non-OK gRPC status code.
	ReasonStatus classify.Reason = "grpc_status"
	// ReasonProtocol is an answer that is not gRPC: HTTP/1 only, no
	// HTTP/2 preface, a content type other than application/grpc, no
	// grpc-status, a malformed message.
	ReasonProtocol classify.Reason = "grpc_protocol"
)

// Kind is the gRPC health kind's declaration.
var Kind = classify.Declare(classify.Kind{
	Name:        "grpc",
	NotProtocol: ReasonProtocol,
	Reasons: []classify.ReasonDef{
		{Reason: ReasonNotServing, Outcome: classify.Unreachable, Doc: "the health answer is NOT_SERVING or UNKNOWN"},
		{Reason: ReasonServiceUnknown, Outcome: classify.Unreachable, Doc: "SERVICE_UNKNOWN or NOT_FOUND: the service asked about is not known"},
		{Reason: ReasonUnimplemented, Outcome: classify.Unreachable, Doc: "UNIMPLEMENTED: the server has no health service"},
		{Reason: ReasonStatus, Outcome: classify.Unreachable, Doc: "any other non-OK grpc-status"},
		{Reason: ReasonProtocol, Outcome: classify.Unreachable, Doc: "the answer is not gRPC"},
	},
})

// ErrNoHTTP2 is what a gRPC probe's TLS handshake ends with when the server
// completed it without selecting HTTP/2 by ALPN: it speaks no gRPC.
var ErrNoHTTP2 = errors.New("the TLS server did not select HTTP/2 (ALPN h2)")

// Reply is what a gRPC health probe got, read or not: the answer the
// exchange hands on (classify.Answer). Its strings are redacted.
type Reply struct {
	// Info is the call's answer as -o json shows it (always there: the
	// service asked about, at least).
	Info Info
	// Read: the call's answer was read without an error; Serving and
	// HasMessage are its decoded message.
	Read       bool
	Serving    int
	HasMessage bool
	// Seen says how the answer was not gRPC ("content-type …", "the
	// server answered in HTTP/1 …"), "" when it was.
	Seen string
}

// Refutes says err, which ended a gRPC probe, shows the server speaks no
// gRPC whatever else it is: no HTTP/2 chosen by ALPN, ALPN refused (a TLS
// alert), or (noPreface) a cleartext connection ended before any HTTP/2
// frame.
func Refutes(err error, noPreface bool) bool {
	if errors.Is(err, ErrNoHTTP2) || noPreface {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error" && op.Err != nil && strings.Contains(op.Err.Error(), "no application protocol")
}

// Kind is the gRPC kind (classify.Answer).
func (*Reply) Kind() *classify.Kind { return Kind }

// Reason names a health answer: only SERVING passes.
func (a *Reply) Reason() classify.Reason {
	code := -1
	if a.Info.Code != nil {
		code = *a.Info.Code
	}
	switch {
	case !a.Read || a.Seen != "" || code < 0 || code == CodeOK && !a.HasMessage:
		return ReasonProtocol
	case code == CodeUnimplemented:
		return ReasonUnimplemented
	case code == CodeNotFound:
		return ReasonServiceUnknown
	case code != CodeOK:
		return ReasonStatus
	case a.Serving == Serving:
		return classify.OK
	case a.Serving == ServiceUnknown:
		return ReasonServiceUnknown
	}
	return ReasonNotServing
}

// Text says what a gRPC health answer that did not pass means, naming the
// code or status the server sent and what was seen when it was not gRPC
// at all.
func (a *Reply) Text(r classify.Reason, err error) string {
	who := "the server"
	if a.Info.Service != "" {
		who = fmt.Sprintf("service %q", a.Info.Service)
	}
	code := func(prefix string) string {
		n := 0
		if a.Info.Code != nil {
			n = *a.Info.Code
		}
		s := fmt.Sprintf("%sgRPC status %s (%d)", prefix, a.Info.CodeName, n)
		if a.Info.Message != "" {
			s += ": " + a.Info.Message
		}
		return s
	}
	switch {
	case r == ReasonProtocol && err != nil:
		text := classify.ErrorText(err)
		switch {
		case a.Seen != "":
			return "not gRPC: " + a.Seen
		case strings.Contains(text, "looked like an HTTP/1.1 header"):
			return "not gRPC: the server answered in HTTP/1.1, not HTTP/2 (" + text + ")"
		case strings.Contains(text, "no application protocol") || errors.Is(err, ErrNoHTTP2):
			return "not gRPC: the TLS server offers no HTTP/2 (ALPN h2) (" + text + ")"
		case strings.HasSuffix(text, "EOF"):
			return "not gRPC: the server closed the connection without an HTTP/2 answer (" + text + ")"
		}
		return "not gRPC: " + text
	case r == ReasonProtocol:
		return "not a gRPC answer: " + a.Seen
	case r == ReasonUnimplemented:
		return code("the server has no grpc.health.v1.Health service: ")
	case a.Info.Status != "":
		return who + " is " + a.Info.Status
	}
	return code("health check of " + who + ": ")
}

// Said is the serving status, else the grpc-status code's name.
func (a *Reply) Said() string {
	if a.Info.Status != "" {
		return a.Info.Status
	}
	return a.Info.CodeName
}

// Reset names a call the server tore down instead of answering it
// (grpcio's stop(0) ends the calls in flight CANCELLED or UNAVAILABLE, a
// GOAWAY is UNAVAILABLE): no health answer, "" for any other reply.
func (a *Reply) Reset() string {
	if a.Info.Status == "" && (a.Info.CodeName == "CANCELLED" || a.Info.CodeName == "UNAVAILABLE") {
		return a.Info.CodeName
	}
	return ""
}

// Lines is the service asked about and what it answered.
func (a *Reply) Lines() []string {
	svc := "the server's overall health"
	if a.Info.Service != "" {
		svc = fmt.Sprintf("service %q", a.Info.Service)
	}
	ans := "no gRPC answer"
	switch {
	case a.Info.Status != "":
		ans = a.Info.Status
	case a.Info.Code != nil:
		ans = fmt.Sprintf("gRPC status %s (%d)", a.Info.CodeName, *a.Info.Code)
	}
	return []string{svc + ": " + ans}
}

// JSON is the call's Info.
func (a *Reply) JSON() any { return &a.Info }

// InfoOf is a gRPC reply's Info (nil for another kind's answer or none):
// the gRPC series of /metrics.
func InfoOf(a classify.Answer) *Info {
	if r, ok := a.(*Reply); ok {
		return &r.Info
	}
	return nil
}

// HealthStatus is the serving status's name, "" when no response message
// came (the grpc prober's probe_grpc_healthcheck_response).
func (a *Reply) HealthStatus() string { return a.Info.Status }

// ClientCode is the call's status code as grpc-go's client reports it
// (blackbox's probe_grpc_status_code): the grpc-status the server sent,
// else UNAVAILABLE — the connection, its TLS or its HTTP/2 ended without
// one, which grpc-go reports as a transport failure.
func (a *Reply) ClientCode() int {
	if a.Info.Code != nil {
		return *a.Info.Code
	}
	return CodeUnavailable
}

// Status is the first line's status column: the serving status, else the code's name.
func (a *Reply) Status() string { return a.Said() }
