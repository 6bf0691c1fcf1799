package listen

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/target"
)

// TestProbeRedactorPerRequest: a secret one request carried is not
// remembered for another's answer: a later request's 400 quotes its own
// text as it is (no mask that would confirm a guess), the module's shared
// redactor never learns it, and each probe gets a redactor of its own
// that masks its own secrets.
func TestProbeRedactorPerRequest(t *testing.T) {
	const secret = "hunter2-s3cret"
	mods, err := blackbox.DefaultModules(target.Defaults(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reds []*redact.Redactor
	prober := func(_ context.Context, o *scheme.Options) probe.Result {
		mu.Lock()
		reds = append(reds, o.Redactor)
		mu.Unlock()
		return probe.Result{Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200}
	}
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	svc := New(Config{Interval: time.Minute, Probe: prober, Modules: mods, Allow: allow})
	h := svc.Handler()
	if c, body := get(t, h, "/probe?target="+url.QueryEscape("http://app:"+secret+"@127.0.0.1:1/?token=tok-"+secret)); c != 200 {
		t.Fatalf("the request with a secret: %d %s", c, body)
	}
	// A guess, in a target that does not parse (port out of range):
	// the 400 quotes it unmasked, as it would any text.
	c, body := get(t, h, "/probe?target="+url.QueryEscape("http://127.0.0.1:99999/"+secret))
	if c != 400 || !strings.Contains(body, secret) || strings.Contains(body, redact.Mask) {
		t.Errorf("a guess after the secret's request: %d %q: want it quoted as sent", c, body)
	}
	if got := mods[blackbox.DefaultModule].Redactor().String("x " + secret); strings.Contains(got, redact.Mask) {
		t.Errorf("the module's shared redactor learnt a request's secret: %q", got)
	}
	get(t, h, "/probe?target="+url.QueryEscape("http://127.0.0.1:1/other"))
	if len(reds) != 2 || reds[0] == reds[1] {
		t.Fatalf("redactors %v: want one a request", reds)
	}
	if got := reds[0].String("x " + secret); !strings.Contains(got, redact.Mask) {
		t.Errorf("the probe's own redactor does not mask its secret: %q", got)
	}
	if got := reds[1].String("x " + secret); strings.Contains(got, redact.Mask) {
		t.Errorf("the next probe's redactor knows the first's secret: %q", got)
	}
	// Userinfo in a refused target is masked where it stands.
	_, body = get(t, h, "/probe?target="+url.QueryEscape("http://user:pw-"+secret+"@127.0.0.1:99999/"))
	if strings.Contains(body, secret) {
		t.Errorf("the userinfo of a refused target is quoted: %q", body)
	}
}

// TestProbeErrorsBounded: a refusal's text quotes at most MaxErrorText
// of the client's input, and refusals are counted against the rate.
func TestProbeErrorsBounded(t *testing.T) {
	mods, _ := blackbox.DefaultModules(target.Defaults(), func(string) string { return "" })
	svc := New(Config{Interval: time.Minute, Modules: mods, Allow: &Allow{}, Rate: 2, Now: func() time.Time { return t0 }})
	h := svc.Handler()
	long := "http://127.0.0.1:99999/" + strings.Repeat("a", 20000)
	c, body := get(t, h, "/probe?target="+url.QueryEscape(long))
	if c != 400 || len(body) > MaxErrorText+8 {
		t.Errorf("a 20 KB target: %d, %d bytes of text", c, len(body))
	}
	c, body = get(t, h, "/probe?target=x&module="+strings.Repeat("m", 5000))
	if c != 400 || len(body) > 200 {
		t.Errorf("a 5 KB module name: %d, %d bytes", c, len(body))
	}
	if c, _ := get(t, h, "/probe?target=x&module=nope"); c != 429 {
		t.Errorf("the third refusal at --probe-rate 2: %d, want 429", c)
	}
}

// TestAllowAddressPatterns: a pattern shaped like an address (a glob of
// digits and dots, an address, a CIDR) matches addresses only, never a
// name spelt to look like one.
func TestAllowAddressPatterns(t *testing.T) {
	a, err := ParseAllow([]string{"127.0.0.*", "10.1.2.3", "192.168.0.0/16", "*.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.254": true, "127.0.0.1.": true, "127.0.1.1": false,
		"127.0.0.1.evil.invalid": false, "127.0.0.1.nip.io": false, "127.0.0.evil": false,
		"10.1.2.3": true, "10.1.2.3.evil.invalid": false, "[::ffff:10.1.2.3]": true,
		"192.168.1.1": true, "192.168.1.1.evil.invalid": false,
		"api.example.com": true, "127.0.0.1.example.com": true,
		"2130706433": false, "0x7f.0.0.1": false,
	} {
		u := &url.URL{Scheme: "http", Host: host}
		if got := a.Permits(u); got != want {
			t.Errorf("%s: %v, want %v", host, got, want)
		}
	}
	if !addressShaped("10.0.?.1") || addressShaped("*") || addressShaped("*.example.com") || addressShaped("db-1") {
		t.Error("addressShaped")
	}
}

// TestModuleBodyIsText: http.body "@FILE" is sent as the text "@FILE"
// (blackbox's meaning), never a file read, whatever the file.
func TestModuleBodyIsText(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("the file's content"), 0o600); err != nil {
		t.Fatal(err)
	}
	yml := "modules:\n  post:\n    prober: http\n    http:\n      method: POST\n      body: \"@" + secretFile + "\"\n  get:\n    http:\n      body: \"@/etc/passwd\"\n"
	mods, err := blackbox.ParseModules("bb.yml", []byte(yml), target.Defaults(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"post": "@" + secretFile, "get": "@/etc/passwd"} {
		o, err := mods[name].Options("http://127.0.0.1:1/", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if string(o.Body) != want || o.BodyFile != "" {
			t.Errorf("%s: body %q, file %q: want the text %q", name, o.Body, o.BodyFile, want)
		}
	}
	if o, _ := mods["get"].Options("http://127.0.0.1:1/", time.Second); o.Method != "GET" {
		t.Errorf("a body without method: %s, want GET (blackbox)", o.Method)
	}
}

// TestHeadersOnEveryAnswer: every answer — the page, /status.json,
// /metrics, /healthz, /probe and its refusals, a 404 — says it must not be
// framed and must not be sniffed.
func TestHeadersOnEveryAnswer(t *testing.T) {
	mods, _ := blackbox.DefaultModules(target.Defaults(), func(string) string { return "" })
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	var seen []string
	svc := New(Config{Interval: time.Minute, Probe: fakeProber(&seen), Modules: mods, Allow: allow})
	publish(t, svc, sweepInput(1, policy.Stay))
	h := svc.Handler()
	for _, path := range []string{"/", "/status.json", "/metrics", "/healthz", "/probe?target=127.0.0.1:1/",
		"/probe", "/probe?target=10.0.0.1:1/", "/probe?target=x&module=nope", "/nope"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		hd := rec.Result().Header
		if hd.Get("X-Frame-Options") != "DENY" || !strings.Contains(hd.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			hd.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s (%d): %v", path, rec.Code, hd)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if csp := rec.Result().Header.Values("Content-Security-Policy"); len(csp) != 1 || !strings.Contains(csp[0], "default-src 'none'") {
		t.Errorf("the page's policy: %q", csp)
	}
}
