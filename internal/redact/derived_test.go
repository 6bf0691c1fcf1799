package redact

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestDerivedSecrets: the Basic value built from -u, URL userinfo or a
// proxy's userinfo is known; a secret is found in any ASCII case (Go
// lowercases a Content-Encoding it quotes) and in Go's %q form; the new
// default parameters are masked.
func TestDerivedSecrets(t *testing.T) {
	r := NewRedactor(nil, nil)
	r.AddBasic("amy", "SEKRITdash")
	u, _ := url.Parse("http://bob:SEKRITupw@h/")
	r.AddURL(u)
	pu, _ := url.Parse("http://pat:SEKRIT%22ppw@proxy:3128")
	r.AddURL(pu)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, in := range []string{
		"Authorization: Basic " + b64("amy:SEKRITdash"),
		"content-encoding: basic " + strings.ToLower(b64("bob:SEKRITupw")),
		"echo " + strings.ToUpper(b64("pat:SEKRIT\"ppw")),
		fmt.Sprintf("malformed MIME header line: %q", "X "+b64("bob:SEKRITupw")+" and SEKRIT\"ppw"),
		"sekritupw SEKRITDASH",
	} {
		got := r.String(in)
		if strings.Contains(strings.ToLower(got), "sekrit") || strings.Contains(got, b64("amy:SEKRITdash")[:12]) ||
			strings.Contains(strings.ToLower(got), strings.ToLower(b64("bob:SEKRITupw")[:12])) || !strings.Contains(got, Mask) {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
	// -u's user name alone is no secret.
	if got := r.String("amy was here"); got != "amy was here" {
		t.Errorf("String = %q", got)
	}
	q, _ := url.Parse("http://h/x?password=a1b2&passwd=c3d4&client_secret=e5f6&X-Amz-Signature=g7h8&x-goog-signature=i9j0&ok=1")
	if got := r.URL(q); got != "http://h/x?password=***&passwd=***&client_secret=***&X-Amz-Signature=***&x-goog-signature=***&ok=1" {
		t.Errorf("URL = %s", got)
	}
	if got := r.String("GET /x?Client_Secret=abcd HTTP/1.1"); strings.Contains(got, "abcd") {
		t.Errorf("by shape: %q", got)
	}
}
