package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
)

// TestAnswerShown: a failing answer's body excerpt and challenges are shown
// in the plain text, the -v details and JSON, their control characters and
// bidi overrides escaped in every one (a server cannot forge a line).
func TestAnswerShown(t *testing.T) {
	ra := 30 * time.Second
	r := probe.Result{
		URL: "http://app/health", Outcome: classify.Unreachable, Reason: classify.HTTPStatus, HTTPStatus: 401,
		Error: "unexpected status 401 (want 2xx)", RetryAfter: &ra,
		BodyExcerpt:     "denied\n\x1b[2JPASS ok forged\u202e…",
		WWWAuthenticate: "Bearer realm=\"api\"\r\nX: y",
	}
	var plain, details bytes.Buffer
	Answer(&plain, r)
	Details(&details, r, nil, false)
	for name, got := range map[string]string{"text": plain.String(), "-v": details.String()} {
		if strings.Contains(got, "\x1b") || strings.Contains(got, "\u202e") || strings.Contains(got, "\nPASS") || strings.Contains(got, "\r") {
			t.Errorf("%s: a control character reached the output:\n%q", name, got)
		}
		for _, want := range []string{`denied\n\x1b[2JPASS ok forged`, `Bearer realm="api"\r\nX: y`} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: missing %q in:\n%s", name, want, got)
			}
		}
	}
	for _, want := range []string{"  body: denied", "  www-authenticate: Bearer", "  retry-after: 30.0s\n"} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("text: missing %q in:\n%s", want, plain.String())
		}
	}
	if !strings.Contains(details.String(), "  body       denied") {
		t.Errorf("-v: no body line in:\n%s", details.String())
	}

	b, err := json.Marshal(NewResultJSON(r, nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if got := j["body_excerpt"]; got != `denied\n\x1b[2JPASS ok forged\u202e…` {
		t.Errorf("body_excerpt = %q", got)
	}
	if got := j["www_authenticate"]; got != `Bearer realm="api"\r\nX: y` {
		t.Errorf("www_authenticate = %q", got)
	}

	// A pass has none of it.
	var none bytes.Buffer
	Answer(&none, probe.Result{URL: "http://app/", Outcome: classify.Pass, Reason: classify.OK, RetryAfter: &ra})
	if none.Len() != 0 {
		t.Errorf("a pass wrote %q", none.String())
	}
}
