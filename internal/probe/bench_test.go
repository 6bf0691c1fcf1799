package probe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
)

// BenchmarkProbeLoopback is one whole probe (fresh connection, request,
// body, classification) against a loopback server: the in-process cost
// behind `healthctl probe`, without process start-up.
func BenchmarkProbeLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	}))
	defer srv.Close()
	o := opts(b, srv.URL+"/health", "", nil)
	b.ReportAllocs()
	for b.Loop() {
		if r := probe.Run(context.Background(), o); r.Reason != classify.OK {
			b.Fatal(r.Reason, r.Error)
		}
	}
}
