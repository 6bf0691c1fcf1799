package httpprobe

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/expect"
)

// TestHeaderConditionTrailer: a field the server sends as a trailer (after
// a chunked HTTP/1.1 body, in HTTP/2's trailing HEADERS), announced by
// Trailer or not, is what a header condition naming it judges when the
// header section lacks it, and a failure says it came as a trailer; over
// the HTTP/1.1 exchange, the Transport and HTTP/2 alike.
func TestHeaderConditionTrailer(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Health")
		w.Header().Set("X-Both", "header")
		io.WriteString(w, `{"status":"streamed"}`)
		w.(http.Flusher).Flush()
		w.Header().Set("X-Health", "ok")
		w.Header().Set(http.TrailerPrefix+"X-Late", "done")
		w.Header().Set(http.TrailerPrefix+"X-Both", "trailer")
	})
	h1 := httptest.NewServer(h)
	defer h1.Close()
	h2 := httptest.NewUnstartedServer(h)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	defer h2.Close()

	cases := []struct {
		name     string
		cond     string
		not      bool
		wantFail string // "" for a pass
	}{
		{name: "announced trailer holds", cond: "X-Health=^ok$"},
		{name: "unannounced trailer holds", cond: "X-Late=^done$"},
		{name: "trailer fails, said so", cond: "X-Health=^down$",
			wantFail: "header X-Health (sent as a trailer) does not match /^down$/"},
		{name: "header section first", cond: "X-Both=^trailer$",
			wantFail: "header X-Both does not match /^trailer$/"},
		{name: "missing is missing", cond: "X-None=.", wantFail: "header X-None is missing"},
		{name: "negative on a trailer", cond: "X-Health=ok", not: true,
			wantFail: "header X-Health (sent as a trailer) matches /ok/, which it must not (X-Health: ok)"},
		{name: "negative on a trailer, no match", cond: "X-Late=fail", not: true},
	}
	type path struct {
		name      string
		url       string
		transport bool
		h2        bool
	}
	for _, p := range []path{
		{"http1 exchange", h1.URL, false, false},
		{"transport", h1.URL, true, false},
		{"h2", h2.URL, true, true},
	} {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				o := plainOpts(t, p.url+"/health")
				if p.h2 {
					o.TLSConfig = &tls.Config{RootCAs: h2.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
				}
				name, expr, _ := strings.Cut(tc.cond, "=")
				c := []expect.HeaderExpect{{Name: name, RE: regexp.MustCompile(expr)}}
				if tc.not {
					o.Expect.HeaderNotRE = c
				} else {
					o.Expect.HeaderRE = c
				}
				r := newRun(o, hooks{Transport: p.transport}).do(context.Background())
				if p.h2 && r.HTTPVersion != "HTTP/2.0" {
					t.Fatalf("spoke %s", r.HTTPVersion)
				}
				got := ""
				if r.Outcome != classify.Pass {
					got = fmt.Sprintf("%s %s: %s", r.Outcome, r.Reason, r.Error)
				}
				if tc.wantFail == "" && got != "" || tc.wantFail != "" && !strings.Contains(got, tc.wantFail) {
					t.Errorf("got %q, want %q", got, tc.wantFail)
				}
			})
		}
	}
}
