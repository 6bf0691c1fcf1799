package follow

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestNext: 303 becomes GET without a body, 307 keeps both; a hop to
// another origin leaves the credentials and the Host override behind.
func TestNext(t *testing.T) {
	prev, _ := http.NewRequest(http.MethodPost, "http://a.invalid/login", strings.NewReader("d"))
	prev.Header.Set("Authorization", "Basic x")
	prev.Header.Set("X-Token", "t")
	prev.Header.Set("Content-Type", "text/plain")
	prev.Host = "override.invalid"
	same, _ := url.Parse("http://a.invalid/next")
	other, _ := url.Parse("https://b.invalid/next")
	secret := []string{"X-Token"}

	r := Next(context.Background(), prev, http.StatusSeeOther, same, false, secret)
	if r.Method != http.MethodGet || r.Body != nil || r.Header.Get("Content-Type") != "" || r.Host != "override.invalid" || r.Header.Get("Authorization") == "" {
		t.Errorf("303 same origin: %s body %v host %q header %v", r.Method, r.Body, r.Host, r.Header)
	}
	r = Next(context.Background(), prev, http.StatusTemporaryRedirect, other, true, secret)
	if r.Method != http.MethodPost || r.Body == nil || r.Host == "override.invalid" || r.Header.Get("Authorization") != "" || r.Header.Get("X-Token") != "" {
		t.Errorf("307 other origin: %s host %q header %v", r.Method, r.Host, r.Header)
	}
	if b, _ := io.ReadAll(r.Body); string(b) != "d" || r.ContentLength != 1 || r.GetBody == nil {
		t.Errorf("307: body %q, Content-Length %d: want the previous request's again", b, r.ContentLength)
	}
	none, _ := http.NewRequest(http.MethodPost, "http://a.invalid/login", nil)
	if r = Next(context.Background(), none, http.StatusTemporaryRedirect, same, false, secret); r.Body != nil || r.ContentLength != 0 {
		t.Errorf("307 of a request without a body: body %v, Content-Length %d", r.Body, r.ContentLength)
	}
	if !HasCredentials(prev.Header, secret) || HasCredentials(r.Header, secret) {
		t.Error("HasCredentials")
	}
}

func TestOriginAndTarget(t *testing.T) {
	a, _ := url.Parse("HTTPS://App.Invalid/x")
	b, _ := url.Parse("https://app.invalid:443/y")
	if Origin(a) != Origin(b) || Origin(a) != "https://app.invalid:443" {
		t.Errorf("origins %q %q", Origin(a), Origin(b))
	}
	if u, ok := Target(a, "/z?q=1"); !ok || u.String() != "https://App.Invalid/z?q=1" {
		t.Errorf("Target: %v %v", u, ok)
	}
	if _, ok := Target(a, "ftp://x.invalid/"); ok {
		t.Error("ftp Location accepted")
	}
}
