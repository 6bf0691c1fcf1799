package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
)

// TestDetailsText pins the -v lines that were wrong once: a label as long
// as the column ran into its value ("retry-after2s"), and a not-yet-valid
// certificate read "expires not valid before …".
func TestDetailsText(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ra := 2 * time.Second
	r := probe.Result{
		URL: "https://app/health", Outcome: classify.TLS, Reason: classify.TLSNotYetValid, Started: now,
		Error: "x509: certificate has expired or is not yet valid", RetryAfter: &ra,
		Address: "127.0.0.1:8443", IPFamily: 4, Proxy: "http://127.0.0.1:3128",
		TLS: &probe.TLSInfo{Version: "TLS 1.3", Cipher: "TLS_AES_128_GCM_SHA256", Chain: []probe.CertInfo{{
			Subject: "CN=a", Issuer: "CN=ca", SANs: []string{"a"},
			NotBefore: now.Add(24 * time.Hour), NotAfter: now.Add(72 * time.Hour), DaysLeft: 3,
		}}},
		Hops:         []probe.Hop{{URL: "http://a/", Status: 301, Location: "https://a/"}},
		DialAttempts: []probe.DialAttempt{{Address: "[::1]:80", Error: "refused"}, {Address: "127.0.0.1:80", Error: "refused"}},
	}
	var b bytes.Buffer
	Details(&b, r, nil, false)
	got := b.String()
	for _, want := range []string{
		"  retry-after 2.0s\n",
		"; not valid before 2026-11-30T12:00:00Z\n",
		"  tls        TLS 1.3 TLS_AES_128_GCM_SHA256\n",
		"  address    127.0.0.1:8443 (IPv4, the proxy http://127.0.0.1:3128)\n",
		"  hop[0]     301 http://a/ -> https://a/\n",
		"  tried      [::1]:80: refused (0.0ms)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "expires not valid") {
		t.Errorf("says \"expires not valid\":\n%s", got)
	}
}

func TestJSONNewFields(t *testing.T) {
	r := probe.Result{URL: "u", Outcome: classify.Unreachable, Reason: classify.Redirect,
		Hops:  []probe.Hop{{URL: "http://a/", Status: 302, Location: "http://a/next"}},
		Proxy: "http://p:3128"}
	var b bytes.Buffer
	if err := output.JSONLine(&b, NewResultJSON(r, nil, 1)); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{`"redirects":[{"url":"http://a/","status":302,"location":"http://a/next"}]`, `"proxy":"http://p:3128"`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in %s", want, got)
		}
	}
	if strings.Contains(got, "dial_errors") {
		t.Errorf("empty dial_errors shown: %s", got)
	}
}

// TestDialErrorsKept: dial_errors, the name scripts knew first, still lists
// the attempts when every address failed, and is absent when one connected.
func TestDialErrorsKept(t *testing.T) {
	failed := []probe.DialAttempt{{Address: "[::1]:80", Error: "refused", MS: 0.1}, {Address: "127.0.0.1:80", Error: "refused", MS: 0.2}}
	var b bytes.Buffer
	_ = output.JSONLine(&b, NewResultJSON(probe.Result{URL: "u", Outcome: classify.Refused, DialAttempts: failed}, nil, 5))
	if !strings.Contains(b.String(), `"dial_errors":[{"address":"[::1]:80","error":"refused"`) || !strings.Contains(b.String(), `"dial_attempts":[`) {
		t.Errorf("all failed: %s", b.String())
	}
	b.Reset()
	one := append(failed[:1:1], probe.DialAttempt{Address: "127.0.0.1:80", MS: 0.2})
	_ = output.JSONLine(&b, NewResultJSON(probe.Result{URL: "u", Outcome: classify.Pass, DialAttempts: one}, nil, 0))
	if strings.Contains(b.String(), "dial_errors") {
		t.Errorf("one connected, dial_errors shown: %s", b.String())
	}
}

// TestNotVerifiedShown: a chain not verified because verification was off
// marks the first line (and so Nagios), -v and JSON with where the switch
// came from; a verified one marks nothing.
func TestNotVerifiedShown(t *testing.T) {
	off := &probe.TLSInfo{Version: "TLS 1.3", Chain: []probe.CertInfo{{Subject: "CN=x"}}, Verified: true}
	off.VerificationOff("HEALTHCTL_INSECURE")
	r := probe.Result{URL: "https://h/", Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200, TLS: off}
	if got := FirstLine(r, false); !strings.HasSuffix(got, " (not verified: HEALTHCTL_INSECURE)") {
		t.Errorf("FirstLine = %q", got)
	}
	var b strings.Builder
	Details(&b, r, nil, false)
	if !strings.Contains(b.String(), "verified   no: verification is off (HEALTHCTL_INSECURE)") {
		t.Errorf("Details = %q", b.String())
	}
	var j strings.Builder
	_ = output.JSONLine(&j, NewResultJSON(r, nil, 0))
	if !strings.Contains(j.String(), `"verified":false,"not_verified":"HEALTHCTL_INSECURE"`) {
		t.Errorf("JSON = %s", j.String())
	}
	if line, _ := Nagios([]probe.Result{r}, NagiosThresholds{}); !strings.Contains(line, "(not verified: HEALTHCTL_INSECURE)") {
		t.Errorf("Nagios = %q", line)
	}
	r.TLS = &probe.TLSInfo{Version: "TLS 1.3", Verified: true}
	if got := FirstLine(r, false); strings.Contains(got, "verified") {
		t.Errorf("FirstLine(verified) = %q", got)
	}
}
