package drain

// gRPC in-flight calls: --inflight grpc://HOST:PORT/pkg.Service/Method is
// a unary call with an empty request message (or --inflight-body's bytes,
// a serialized protobuf message), judged as an HTTP in-flight request is
// (OK, or cut: INFLIGHT_ABORTED with the gRPC status).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/grpchealth"
	"github.com/healthctl/healthctl/internal/probe/httpprobe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// IsGRPC says u is a gRPC URL (its scheme row asks for a gRPC service).
func IsGRPC(u *url.URL) bool {
	row, ok := scheme.LookupScheme(u.Scheme)
	return ok && row.Options&scheme.AppliesGRPCService != 0
}

// GRPCMethod checks a gRPC in-flight URL's path: /pkg.Service/Method.
func GRPCMethod(u *url.URL) error {
	svc, method, ok := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if !ok || svc == "" || method == "" || strings.Contains(method, "/") || u.RawQuery != "" {
		return fmt.Errorf("want %s (a unary method, called with an empty request or --inflight-body's)", scheme.InflightCalls())
	}
	return nil
}

// MaxGRPCBody is the largest --inflight-body: grpc-go's (and grpcio's,
// grpc-js's) default largest request message, 4 MiB; a server refuses a
// longer one (RESOURCE_EXHAUSTED) unless it was configured otherwise.
const MaxGRPCBody = 4 << 20

// grpcFrame is msg as one uncompressed gRPC message (grpchealth.Frame).
func grpcFrame(msg []byte) []byte { return grpchealth.Frame(msg) }

// grpcCall makes one unary call on its own connection, bounded by
// timeout, with body (a serialized protobuf message; empty: the empty
// request) as its request; wrote is told once the request has been
// written.
func grpcCall(ctx context.Context, opts *scheme.Options, body []byte, timeout time.Duration, wrote chan<- struct{}) (r timedRequest) {
	r.made = time.Now()
	defer func() { r.end = time.Now() }()
	var once sync.Once
	tell := func() { once.Do(func() { wrote <- struct{}{} }) }
	defer tell()
	row, _ := scheme.LookupScheme(opts.URL.Scheme)
	secure := row.TLS
	tr := httpprobe.Transport(withTimeout(opts, pollTimeout))
	tr.Protocols = grpchealth.Protocols(secure)
	tr.TLSClientConfig.NextProtos = []string{"h2"}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { tell() }})
	// The call as the health probe builds it (grpchealth.NewCall); -H adds
	// request metadata, but not over the call's own headers.
	req, err := grpchealth.NewCall(ctx, opts.URL, secure, opts.URL.Path, grpcFrame(body), timeout, opts.UserAgent)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	for k, vs := range opts.Header {
		if _, own := req.Header[http.CanonicalHeaderKey(k)]; own {
			continue
		}
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if opts.Host != "" {
		req.Host = opts.Host
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		// No answer: refused, or cut before the status (a unary answer's
		// headers come with its message; grpc-go's Stop() closes the
		// connection under the call).
		r.Err = "gRPC call cut: " + shortErr(err)
		return r
	}
	defer resp.Body.Close()
	r.Status = resp.StatusCode
	if resp.ProtoMajor != 2 {
		r.Err = fmt.Sprintf("not gRPC: the server answered %s", resp.Proto)
		return r
	}
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, grpchealth.MaxBody))
	r.Bytes = n
	if err != nil {
		// A reset stream (grpc-go's Stop(): CANCEL), the connection
		// closed: cut before its status.
		r.Err = "gRPC call cut: " + shortErr(err)
		return r
	}
	st, msg := grpchealth.CallStatus(resp)
	code, cerr := strconv.Atoi(st)
	switch {
	case st == "":
		r.Err = "gRPC call ended without a grpc-status"
	case cerr != nil:
		r.Err = fmt.Sprintf("gRPC status %q is not a number", st)
	case code != grpchealth.CodeOK:
		r.Err = "gRPC " + grpchealth.CodeName(code)
		if m := grpchealth.UnescapeMessage(msg); m != "" {
			r.Err += ": " + m
		}
	default:
		r.Complete = true
		if r.Status == 0 {
			r.Status = http.StatusOK
		}
	}
	return r
}

// grpcSetupHint is what a gRPC in-flight call that failed before the
// signal points at: the method, or the request message (body bytes of
// --inflight-body; 0: the empty one) when the server could not take it.
func grpcSetupHint(err string, body int) string {
	switch {
	case strings.Contains(err, "gRPC UNIMPLEMENTED"):
		return " (a wrong method?)"
	case !strings.Contains(err, "gRPC INVALID_ARGUMENT") && !strings.Contains(err, "gRPC INTERNAL") &&
		!strings.Contains(err, "gRPC RESOURCE_EXHAUSTED") && !strings.Contains(err, "gRPC FAILED_PRECONDITION"):
		return ""
	case body == 0:
		return " (the request was the empty message: does the method need --inflight-body FILE?)"
	default:
		return fmt.Sprintf(" (the request was --inflight-body's %d bytes: are they a serialized message of the method's request type?)", body)
	}
}
