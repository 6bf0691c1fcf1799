package drain

import (
	"bytes"
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	input "github.com/healthctl/healthctl/internal/target"
)

// seen records the requests a loopback server got.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seen) handler(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r.Clone(context.Background()))
	s.mu.Unlock()
	_, _ = w.Write([]byte("done"))
}

func (s *seen) last(t *testing.T) *http.Request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		t.Fatal("the server got no request")
	}
	return s.reqs[len(s.reqs)-1]
}

// optionsFor builds a URL's options from probe flags, as drain-test's
// command does.
func optionsFor(t *testing.T, raw string, set func(*input.Input)) *scheme.Options {
	t.Helper()
	in := input.Defaults()
	in.UserAgent = "healthctl/test"
	set(&in)
	tmpl, err := in.Build(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	o, err := tmpl.ForURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// inflightOnce runs one in-flight request as drain-test does at the signal.
func inflightOnce(t *testing.T, o *scheme.Options) timedRequest {
	t.Helper()
	in := startInflight(Config{Inflight: 1}, o)
	in.wg.Wait()
	in.cancel()
	if len(in.got) != 1 {
		t.Fatalf("%d in-flight results, want 1", len(in.got))
	}
	return in.got[0]
}

// TestInflightHeadersAsProbe: -H 'User-Agent: x' wins over --user-agent and
// -H 'Name:' removes the header, on in-flight requests as in a probe.
func TestInflightHeadersAsProbe(t *testing.T) {
	var s seen
	srv := httptest.NewServer(http.HandlerFunc(s.handler))
	defer srv.Close()
	o := optionsFor(t, srv.URL+"/slow", func(in *input.Input) {
		in.Headers = []string{"User-Agent: x", "Accept-Encoding:", "X-Empty:"}
	})
	if r := inflightOnce(t, o); r.Status != 200 || r.Err != "" {
		t.Fatalf("in-flight request: %+v", r)
	}
	got := s.last(t)
	if ua := got.Header.Values("User-Agent"); len(ua) != 1 || ua[0] != "x" {
		t.Errorf("User-Agent %q, want the -H value x", ua)
	}
	for _, h := range []string{"X-Empty", "Accept-Encoding"} {
		if _, sent := got.Header[h]; sent {
			t.Errorf("%s sent (%q), want it removed by -H '%s:'", h, got.Header.Values(h), h)
		}
	}
	// The probe sends the same request.
	res := probe.Run(context.Background(), o)
	got = s.last(t)
	if ua := got.Header.Get("User-Agent"); res.HTTPStatus != 200 || ua != "x" || got.Header.Get("X-Empty") != "" {
		t.Errorf("probe: status %d, User-Agent %q", res.HTTPStatus, ua)
	}
}

// TestInflightResolveRaces: --resolve with several addresses is dialled by
// the probe's RFC 8305 racer: the first address refuses, the next connects,
// and the request keeps the name as its Host.
func TestInflightResolveRaces(t *testing.T) {
	var s seen
	srv := httptest.NewServer(http.HandlerFunc(s.handler))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	// 127.0.0.2 is loopback too, but the server listens on 127.0.0.1 only.
	o := optionsFor(t, "http://svc.invalid:"+port+"/slow", func(in *input.Input) {
		in.Resolve = []string{"svc.invalid:" + port + ":127.0.0.2,127.0.0.1"}
	})
	start := time.Now()
	if r := inflightOnce(t, o); r.Status != 200 || r.Err != "" {
		t.Fatalf("in-flight request: %+v", r)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v: the refused address held up the next", took)
	}
	if h := s.last(t).Host; h != "svc.invalid:"+port {
		t.Errorf("Host %q, want the --resolve name", h)
	}
	// The kept-alive connection dials the same way.
	ka := openKeepAlive(o)
	if ka.conn == nil {
		t.Fatalf("kept-alive connection: %s", ka.why)
	}
	ka.conn.Close()
}

// TestInflightCACert: --cacert is trusted by in-flight requests and the
// kept-alive connection as by a probe; without it the server's certificate
// is refused.
func TestInflightCACert(t *testing.T) {
	var s seen
	srv := httptest.NewTLSServer(http.HandlerFunc(s.handler))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	o := optionsFor(t, srv.URL+"/slow", func(in *input.Input) { in.CACert = ca })
	if r := inflightOnce(t, o); r.Status != 200 || r.Err != "" {
		t.Fatalf("in-flight request with --cacert: %+v", r)
	}
	if res := probe.Run(context.Background(), o); res.HTTPStatus != 200 {
		t.Errorf("probe with --cacert: %s %s", res.Reason, res.Error)
	}
	ka := openKeepAlive(o)
	if ka.conn == nil {
		t.Fatalf("kept-alive connection with --cacert: %s", ka.why)
	}
	ka.conn.Close()

	plain := optionsFor(t, srv.URL+"/slow", func(*input.Input) {})
	if r := inflightOnce(t, plain); r.Status != 0 || !strings.Contains(r.Err, "certificate") {
		t.Errorf("in-flight request without --cacert: %+v, want a certificate error", r)
	}
}

// TestTrafficWindowIsDrainTests: a traffic request's windows are the
// traffic window, not the probe's --read-timeout/--connect-timeout (the
// documented command's traffic goes to the slow --inflight path); a health
// poll keeps the probe's shorter ones. Fails with the read window min'ed
// with the probe's (every traffic request to a slow path was cut).
func TestTrafficWindowIsDrainTests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(400 * time.Millisecond)
		_, _ = w.Write([]byte("slow done"))
	}))
	defer srv.Close()
	o := optionsFor(t, srv.URL+"/slow", func(in *input.Input) { in.ReadTimeout = 100 * time.Millisecond })
	ctx := context.Background()
	if tp := pollWithin(ctx, o, evidence.Traffic, 5*time.Second); tp.Status != http.StatusOK || tp.Cut || tp.Err != "" {
		t.Errorf("traffic request within a 5 s window, --read-timeout 100ms: %+v, want 200 served", tp.Poll)
	}
	if tp := pollWithin(ctx, o, evidence.Ready, pollTimeout); tp.Status != 0 || !strings.Contains(tp.Err, "timeout") {
		t.Errorf("readiness poll, --read-timeout 100ms, a 400 ms answer: %+v, want a timeout", tp.Poll)
	}
}

func TestGRPCFrame(t *testing.T) {
	for _, c := range []struct {
		msg  []byte
		want []byte
	}{
		{nil, []byte{0, 0, 0, 0, 0}},
		{[]byte{}, []byte{0, 0, 0, 0, 0}},
		{[]byte("\n\x05drain"), append([]byte{0, 0, 0, 0, 7}, "\n\x05drain"...)},
		{make([]byte, 300), append([]byte{0, 0, 0, 1, 44}, make([]byte, 300)...)},
	} {
		if got := grpcFrame(c.msg); !bytes.Equal(got, c.want) {
			t.Errorf("grpcFrame(%d bytes) = % x, want % x", len(c.msg), got[:min(len(got), 8)], c.want[:min(len(c.want), 8)])
		}
	}
}

func TestGRPCSetupHint(t *testing.T) {
	for _, c := range []struct {
		err  string
		body int
		want string
	}{
		{"gRPC UNIMPLEMENTED: unknown method Nope", 0, "(a wrong method?)"},
		{"gRPC INVALID_ARGUMENT: want x", 0, "the empty message: does the method need --inflight-body FILE?"},
		{"gRPC INTERNAL: grpc: error unmarshalling request", 2, "--inflight-body's 2 bytes"},
		{"gRPC RESOURCE_EXHAUSTED: too big", 9, "--inflight-body's 9 bytes"},
		{"gRPC UNAVAILABLE: starting", 0, ""},
		{"gRPC call cut: EOF", 3, ""},
	} {
		got := grpcSetupHint(c.err, c.body)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("grpcSetupHint(%q, %d) = %q, want it to say %q", c.err, c.body, got, c.want)
		}
	}
}

// TestEmptyReplyHasNoTLSHint: a server that answered HTTP and now closes
// connections without an answer is closing; the probe's "is the URL
// https://?" does not fit that evidence and is not repeated.
func TestEmptyReplyHasNoTLSHint(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 512)
			_, _ = c.Read(buf)
			c.Close()
		}
	}()
	tp := poll(context.Background(), optionsFor(t, "http://"+l.Addr().String()+"/ready", func(*input.Input) {}), evidence.Ready)
	if tp.Answered() || !strings.Contains(tp.Err, "EOF") {
		t.Fatalf("poll = %+v: want an EOF without an answer", tp.Poll)
	}
	if strings.Contains(tp.Err, "https://") || !strings.Contains(tp.Err, "the server closed the connection") {
		t.Errorf("poll error %q: want the server closing, no https hint", tp.Err)
	}
}
