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

// TestHTTP2 checks that a TLS server offering h2 is spoken to in HTTP/2 (a
// custom dialer and TLS config would silently turn it off) and that the
// TLS details are recorded.
func TestHTTP2(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
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
		if _, ok := r.Timings[ph]; !ok {
			t.Errorf("phase %s missing: %v", ph, r.Timings)
		}
	}
}
