package probe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// TestDisplayURL: a result's URL is the builder's rendering only while it
// holds — for the same URL and no secret added since — and is rendered
// again otherwise: a secret registered after the builder rendered the URL
// (another target's password that the path happens to hold) is still
// masked, and options copied for another URL never show the first's.
func TestDisplayURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) }))
	defer srv.Close()
	const secret = "s3cr3t-path-token"
	o := opts(t, srv.URL+"/health/"+secret, "", nil)
	o.Display = scheme.DisplayOf(o.Redactor, o.URL)
	if got := probe.Run(context.Background(), o).URL; got != o.Display.Text || !strings.Contains(got, secret) {
		t.Fatalf("fresh rendering: got %q, want %q", got, o.Display.Text)
	}
	// The builder's text, not a new rendering, while it holds.
	o.Display.Text = "rendered by the builder"
	if got := probe.Run(context.Background(), o).URL; got != "rendered by the builder" {
		t.Errorf("valid display: got %q", got)
	}
	// Another URL in copied options: rendered for that URL.
	c := *o
	c.URL, _ = url.Parse(srv.URL + "/other")
	if got := probe.Run(context.Background(), &c).URL; got != srv.URL+"/other" {
		t.Errorf("copied options for another URL: got %q", got)
	}
	// Another redactor in copied options (one that knows the secret):
	// rendered by it, even when its count of secrets is the same.
	c = *o
	c.Redactor = redact.NewRedactor(nil, nil)
	c.Redactor.AddSecret(secret)
	c.Display.Gen = c.Redactor.Generation()
	if got := probe.Run(context.Background(), &c).URL; strings.Contains(got, secret) || got == "rendered by the builder" {
		t.Errorf("copied options with another redactor: got %q", got)
	}
	// A secret added since: rendered again, and masked.
	o.Redactor.AddSecret(secret)
	got := probe.Run(context.Background(), o).URL
	if strings.Contains(got, secret) || got == "rendered by the builder" {
		t.Errorf("after a secret was added: got %q, want it rendered again with the secret masked", got)
	}
	// A duplicate secret changes nothing: the generation stays.
	g := o.Redactor.Generation()
	o.Redactor.AddSecret(secret)
	if o.Redactor.Generation() != g {
		t.Errorf("a secret added twice moved the generation %d -> %d", g, o.Redactor.Generation())
	}
}
