package drain

// gRPC in-flight calls: --inflight grpc://HOST:PORT/pkg.Service/Method is
// a unary call with an empty request message (or --inflight-body's bytes,
// a serialized protobuf message), judged as an HTTP in-flight request is
// (OK, or cut: INFLIGHT_ABORTED with the gRPC status).

import (
	"bytes"
	"context"
	"encoding/binary"
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
		return fmt.Errorf("want grpc://HOST:PORT/pkg.Service/Method (a unary method, called with an empty request or --inflight-body's)")
	}
	return nil
}

// MaxGRPCBody is the largest --inflight-body: grpc-go's (and grpcio's,
// grpc-js's) default largest request message, 4 MiB; a server refuses a
// longer one (RESOURCE_EXHAUSTED) unless it was configured otherwise.
const MaxGRPCBody = 4 << 20

// grpcFrame is msg as one uncompressed gRPC message: a zero flag byte, the
// length (4 bytes, big-endian), the bytes. An empty msg is the empty
// request (google.protobuf.Empty, or any message whose fields all
// default): 0 0 0 0 0.
func grpcFrame(msg []byte) []byte {
	f := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(f[1:], uint32(len(msg)))
	return append(f, msg...)
}

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
	scheme := "http"
	if secure {
		scheme = "https"
	}
	target := &url.URL{Scheme: scheme, Host: opts.URL.Host, Path: opts.URL.Path}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { tell() }})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(grpcFrame(body)))
	if err != nil {
		r.Err = err.Error()
		return r
	}
	for k, vs := range opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if opts.Host != "" {
		req.Host = opts.Host
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	req.Header.Set("Grpc-Timeout", grpchealth.Timeout(timeout))
	if opts.UserAgent != "" {
		req.Header.Set("User-Agent", opts.UserAgent)
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
	st, msg := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if st == "" {
		st, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
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
