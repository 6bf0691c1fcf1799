package probe_test

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/grpcsrv"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/grpchealth"
	"github.com/healthctl/healthctl/internal/probe"
)

// TestGRPCFromRealServers runs grpc://, grpcs://, tcp:// and tls:// probes
// against grpc-go's own health server and real listeners that are not gRPC,
// and checks the reason, the error text and the recorded answer.
func TestGRPCFromRealServers(t *testing.T) {
	pki, err := pkifix.NewPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good, err := pki.ServerCertificate(pkifix.CertGood)
	if err != nil {
		t.Fatal(err)
	}
	expired, err := pki.ServerCertificate(pkifix.CertExpired)
	if err != nil {
		t.Fatal(err)
	}
	start := func(o grpcsrv.Options) string {
		s, err := grpcsrv.Start(t, o)
		if err != nil {
			t.Fatal(err)
		}
		return s.Addr
	}
	serving := start(grpcsrv.Options{Services: map[string]string{"down": "NOT_SERVING", "unk": "SERVICE_UNKNOWN"}})
	notServing := start(grpcsrv.Options{Status: "NOT_SERVING"})
	noHealth := start(grpcsrv.Options{NoHealth: true})
	secure := start(grpcsrv.Options{TLS: &tls.Config{Certificates: []tls.Certificate{good}}})

	h1 := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(h1.Close)
	h1tls := httptest.NewUnstartedServer(http.NotFoundHandler())
	h1tls.TLS = &tls.Config{Certificates: []tls.Certificate{good}}
	h1tls.Config.ErrorLog = log.New(io.Discard, "", 0)
	h1tls.StartTLS()
	t.Cleanup(h1tls.Close)
	h2c := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	t.Cleanup(h2c.Close)

	hold := func(conf *tls.Config) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					if conf != nil {
						c = tls.Server(c, conf)
					}
					io.Copy(io.Discard, c)
				}()
			}
		}()
		return l.Addr().String()
	}
	plain := hold(nil)
	tlsGood := hold(&tls.Config{Certificates: []tls.Certificate{good}})
	tlsExpired := hold(&tls.Config{Certificates: []tls.Certificate{expired}})
	closed, err := fixture.NewClosedPort(t)
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		url     string
		service string
		want    classify.Reason
		text    string
		status  string
	}{
		{"grpc://" + serving, "", classify.OK, "", "SERVING"},
		{"grpc://" + serving + "/down", "", grpchealth.ReasonNotServing, `service "down" is NOT_SERVING`, "NOT_SERVING"},
		{"grpc://" + serving, "down", grpchealth.ReasonNotServing, `service "down" is NOT_SERVING`, "NOT_SERVING"},
		{"grpc://" + serving + "/unk", "", grpchealth.ReasonServiceUnknown, `service "unk" is SERVICE_UNKNOWN`, "SERVICE_UNKNOWN"},
		{"grpc://" + serving + "/nope", "", grpchealth.ReasonServiceUnknown, `gRPC status NOT_FOUND (5): unknown service`, ""},
		{"grpc://" + notServing, "", grpchealth.ReasonNotServing, "the server is NOT_SERVING", "NOT_SERVING"},
		{"grpc://" + noHealth, "", grpchealth.ReasonUnimplemented, "no grpc.health.v1.Health service: gRPC status UNIMPLEMENTED (12)", ""},
		{"grpcs://" + secure, "", classify.OK, "", "SERVING"},
		{"grpcs://localhost:" + port(secure), "", classify.OK, "", "SERVING"},
		{"grpc://" + secure, "", grpchealth.ReasonProtocol, "not gRPC", ""},
		{"grpcs://" + serving, "", classify.TLSNotTLS, "", ""},
		{"grpc://" + h1.Listener.Addr().String(), "", grpchealth.ReasonProtocol, `answered in HTTP/1 ("HTTP/1.1 404 Not Found"), not HTTP/2`, ""},
		{"grpcs://" + h1tls.Listener.Addr().String(), "", grpchealth.ReasonProtocol, "ALPN h2", ""},
		{"grpc://" + h2c.Listener.Addr().String(), "", grpchealth.ReasonProtocol, `content-type "text/plain; charset=utf-8", not application/grpc`, ""},
		{"grpc://" + plain, "", classify.HeadersTimeout, "", ""},
		{"grpcs://" + tlsGood, "", grpchealth.ReasonProtocol, "ALPN", ""},
		{"grpc://" + closed.Addr, "", classify.ConnRefused, "", ""},
		{"tcp://" + plain, "", classify.OK, "", ""},
		{"tcp://" + closed.Addr, "", classify.ConnRefused, "", ""},
		{"tls://" + tlsGood, "", classify.OK, "", ""},
		{"tls://" + tlsExpired, "", classify.TLSExpired, "", ""},
		{"tls://localhost:" + port(tlsGood), "", classify.OK, "", ""},
		{"tls://" + plain, "", classify.TLSHandshakeTimeout, "", ""},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.url, "/", "_")+c.service, func(t *testing.T) {
			o := opts(t, c.url, "", pki)
			o.GRPCService = c.service
			r := probe.Run(context.Background(), o)
			if r.Reason != c.want {
				t.Fatalf("%s: got %s/%s (%s), want %s", c.url, r.Outcome, r.Reason, r.Error, c.want)
			}
			if !strings.Contains(r.Error, c.text) {
				t.Errorf("error %q, want it to contain %q", r.Error, c.text)
			}
			if strings.HasPrefix(c.url, "grpc") && (grpchealth.InfoOf(r.Answer) == nil || grpchealth.InfoOf(r.Answer).Status != c.status) {
				t.Errorf("grpc %+v, want status %q", r.Answer, c.status)
			}
			if c.want == classify.OK {
				for _, ph := range []probe.Phase{probe.PhaseConnect, probe.PhaseTotal} {
					if _, ok := r.Timings.Get(ph); !ok {
						t.Errorf("phase %s missing: %v", ph, r.Timings)
					}
				}
			}
			if strings.HasPrefix(c.url, "tls") && c.want != classify.TLSHandshakeTimeout && (r.TLS == nil || len(r.TLS.Chain) == 0) {
				t.Errorf("no chain recorded: %+v", r.TLS)
			}
		})
	}
}

func port(hostport string) string {
	_, p, _ := net.SplitHostPort(hostport)
	return p
}

// TestGRPCWindows: an HTTP/2 server that answers gRPC headers and then
// never ends the stream, or never answers at all, is cut by the read
// window, named after the phase it hung in, within the window plus a
// generous margin.
func TestGRPCWindows(t *testing.T) {
	h2c := func(h http.HandlerFunc) string {
		srv := httptest.NewUnstartedServer(h)
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	headersOnly := h2c(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	silent := h2c(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	trailersOnly := h2c(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "14")
		w.Header().Set("Grpc-Message", "draining%21")
		w.WriteHeader(http.StatusOK)
	})
	for _, c := range []struct {
		addr string
		want classify.Reason
		text string
	}{
		{headersOnly, classify.BodyTimeout, "response body not complete within --read-timeout"},
		{silent, classify.HeadersTimeout, "no response headers within --read-timeout"},
		{trailersOnly, grpchealth.ReasonStatus, "gRPC status UNAVAILABLE (14): draining!"},
	} {
		o := opts(t, "grpc://"+c.addr, "", nil)
		o.ReadTimeout = 300 * time.Millisecond
		start := time.Now()
		r := probe.Run(context.Background(), o)
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%s: took %v", c.want, took)
		}
		if r.Reason != c.want || !strings.Contains(r.Error, c.text) {
			t.Errorf("got %s (%s), want %s (%s)", r.Reason, r.Error, c.want, c.text)
		}
	}
}

// TestGRPCMTLSOneVerdict: a grpc-go server over TLS 1.3 that requires a
// client certificate, probed without one, 50 times. The server's
// certificate_required alert comes after the client's handshake is done,
// and the request written then races it: "broken pipe" or a reset may
// come first. Every run must say tls_client_cert_required (exit 3,
// pending-tls), never conn_reset (exit 1, a redeploy of a healthy
// service); tls:// of the same server too.
func TestGRPCMTLSOneVerdict(t *testing.T) {
	pki, err := pkifix.NewPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good, err := pki.ServerCertificate(pkifix.CertGood)
	if err != nil {
		t.Fatal(err)
	}
	s, err := grpcsrv.Start(t, grpcsrv.Options{TLS: &tls.Config{Certificates: []tls.Certificate{good},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.Pool(), MinVersion: tls.VersionTLS13}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i := 0; i < 50; i++ {
		for _, scheme := range []string{"grpcs", "tls"} {
			r := probe.Run(context.Background(), opts(t, scheme+"://"+s.Addr, "", pki))
			seen[scheme+" "+string(r.Reason)]++
			if r.Reason != classify.TLSClientCertRequired {
				t.Errorf("run %d %s: %s/%s (%s), want tls_client_cert_required", i, scheme, r.Outcome, r.Reason, r.Error)
			}
		}
	}
	t.Logf("verdicts: %v", seen)
}

// TestGRPCGoAwayIsUnavailable: an HTTP/2 server that sends GOAWAY
// (INTERNAL_ERROR) instead of answering the call — a gRPC server stopping —
// ended the call UNAVAILABLE, as grpc-go reports it; it spoke HTTP/2, so
// it is never "not gRPC".
func TestGRPCGoAwayIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				preface := make([]byte, len(http2.ClientPreface))
				if _, err := io.ReadFull(c, preface); err != nil {
					return
				}
				fr := http2.NewFramer(c, c)
				fr.WriteSettings()
				for {
					f, err := fr.ReadFrame()
					if err != nil {
						return
					}
					if _, ok := f.(*http2.HeadersFrame); ok {
						fr.WriteGoAway(0, http2.ErrCodeInternal, nil)
						return
					}
				}
			}()
		}
	}()
	o := opts(t, "grpc://"+ln.Addr().String(), "", nil)
	r := probe.Run(context.Background(), o)
	if r.Reason != grpchealth.ReasonStatus || !strings.Contains(r.Error, "UNAVAILABLE") || strings.Contains(r.Error, "not gRPC") {
		t.Fatalf("%s/%s (%s): want grpc_status UNAVAILABLE", r.Outcome, r.Reason, r.Error)
	}
	if g := grpchealth.InfoOf(r.Answer); g == nil || g.CodeName != "UNAVAILABLE" {
		t.Errorf("grpc %+v, want code UNAVAILABLE", r.Answer)
	}
}
