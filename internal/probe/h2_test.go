package probe_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
)

// h2Server is a TLS server that offers h2 and answers "ok"; it closes
// when the test ends.
func h2Server(t *testing.T) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestHTTP2 checks that a TLS server offering h2 is spoken to in HTTP/2 (a
// custom dialer and TLS config would silently turn it off) and that the
// TLS details are recorded.
func TestHTTP2(t *testing.T) {
	srv := h2Server(t)
	o := opts(t, srv.URL+"/health", "", nil)
	o.TLSConfig.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	r := probe.Run(context.Background(), o)
	if r.Reason != classify.OK {
		t.Fatalf("%s: %s", r.Reason, r.Error)
	}
	if r.HTTPVersion != "HTTP/2.0" {
		t.Errorf("HTTP version %q, want HTTP/2.0", r.HTTPVersion)
	}
	if r.TLS == nil || r.TLS.Version == "" || len(r.TLS.Chain) == 0 {
		t.Errorf("TLS details missing: %+v", r.TLS)
	}
	for _, ph := range []probe.Phase{probe.PhaseConnect, probe.PhaseTLS, probe.PhaseTTFB, probe.PhaseTransfer, probe.PhaseTotal} {
		if _, ok := r.Timings.Get(ph); !ok {
			t.Errorf("phase %s missing: %v", ph, r.Timings)
		}
	}
}

// TestHTTP2AfterPlainRedirect: a plain http:// URL followed (--follow) to an
// https server that offers h2 still speaks HTTP/2 there; only a probe that
// cannot leave plain HTTP skips the HTTP/2 set-up.
func TestHTTP2AfterPlainRedirect(t *testing.T) {
	secure := h2Server(t)
	plain := httptest.NewServer(http.RedirectHandler(secure.URL+"/health", http.StatusFound))
	defer plain.Close()
	o := opts(t, plain.URL+"/", "", nil)
	o.TLSConfig.RootCAs = secure.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	o.Follow = 1
	r := probe.Run(context.Background(), o)
	if r.Reason != classify.OK {
		t.Fatalf("%s: %s", r.Reason, r.Error)
	}
	if r.HTTPVersion != "HTTP/2.0" || r.TLS == nil {
		t.Errorf("after the redirect: HTTP version %q, TLS %v; want HTTP/2.0 over TLS", r.HTTPVersion, r.TLS)
	}
}
