package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func buildFlags(t *testing.T, env map[string]string, args ...string) (*template, error) {
	t.Helper()
	var f probeFlags
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.build(func(k string) string { return env[k] })
}

func TestHeadersFromFileAndFlags(t *testing.T) {
	dir := t.TempDir()
	hf := filepath.Join(dir, "headers")
	os.WriteFile(hf, []byte("# comment\nX-From-File: one, two\n\nAuthorization: Bearer filetoken\n"), 0o600)
	df := filepath.Join(dir, "body")
	os.WriteFile(df, []byte(`{"ping":1}`), 0o600)
	tm, err := buildFlags(t, nil, "-H", "@"+hf, "-H", "Host: app.example:8443", "-H", "Accept: a, b",
		"-H", "User-Agent:", "-u", "admin:hunter22", "--data", "@"+df, "-H", "Content-Type: application/json")
	if err != nil {
		t.Fatal(err)
	}
	o := tm.opts
	if got := o.Header.Get("X-From-File"); got != "one, two" {
		t.Errorf("header from file %q", got)
	}
	if got := o.Header.Values("Accept"); len(got) != 1 || got[0] != "a, b" {
		t.Errorf("a comma split the header: %q", got)
	}
	if o.Host != "app.example:8443" || o.Header.Get("Host") != "" {
		t.Errorf("Host %q / header %q", o.Host, o.Header.Get("Host"))
	}
	if v, ok := o.Header["User-Agent"]; !ok || v[0] != "" {
		t.Errorf("'User-Agent:' should send it empty: %v", v)
	}
	if o.Method != "POST" || string(o.Body) != `{"ping":1}` || o.Header.Get("Content-Type") != "application/json" {
		t.Errorf("method %s body %q ct %q", o.Method, o.Body, o.Header.Get("Content-Type"))
	}
	if !o.HasUser || o.User != "admin" || o.Password != "hunter22" {
		t.Errorf("-u: %q %q", o.User, o.Password)
	}
	text := o.Redactor.String("Bearer filetoken and hunter22")
	if strings.Contains(text, "filetoken") || strings.Contains(text, "hunter22") {
		t.Errorf("secrets from -H @file / -u not registered: %s", text)
	}
	// The Host header names the TLS server too (unless --servername).
	u, err := tm.forURL("https://127.0.0.1:8443/health")
	if err != nil || u.TLSConfig.ServerName != "app.example" {
		t.Errorf("TLS server name %q (%v)", u.TLSConfig.ServerName, err)
	}
}

func TestParseURL(t *testing.T) {
	for raw, want := range map[string]string{
		"127.0.0.1:8080/health":    "http://127.0.0.1:8080/health",
		"http://[::1]:8080/":       "http://[::1]:8080/",
		"https://app.invalid/h?x":  "https://app.invalid/h?x",
		"localhost:9000":           "http://localhost:9000",
		"ftp://x/":                 "error",
		"http://":                  "error",
		"":                         "error",
		"http://h:0/":              "error",
		"http://[::1/":             "error",
		"3":                        "error",
		"HTTP://App.Invalid:80/ok": "http://App.Invalid:80/ok",
	} {
		u, err := parseURL(raw)
		got := "error"
		if err == nil {
			got = u.String()
		}
		if got != want {
			t.Errorf("parseURL(%q) = %s (%v), want %s", raw, got, err, want)
		}
	}
}

func TestParseResolveAndSizes(t *testing.T) {
	for in, want := range map[string]string{
		"App.invalid:443:127.0.0.1": "app.invalid:443=127.0.0.1",
		"h:80:[::1]":                "h:80=::1",
		"h:80":                      "error",
		"h:x:127.0.0.1":             "error",
		"h:80:example":              "error",
	} {
		k, a, err := parseResolve(in)
		got := k + "=" + a
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("parseResolve(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]int64{"65536": 65536, "64KiB": 65536, "1MiB": 1 << 20, "2k": 2048, "1mb": 1000000, "x": -1, "-1": -1} {
		got, err := parseSize(in)
		if err != nil {
			got = -1
		}
		if got != want {
			t.Errorf("parseSize(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestHeaderValueWithNewlineIsAUsageError(t *testing.T) {
	if _, err := buildFlags(t, nil, "-H", "X-A: a\r\nInjected: b"); err == nil || !strings.Contains(err.Error(), "control character") {
		t.Errorf("got %v", err)
	}
	if _, err := buildFlags(t, nil, "-H", "Host: a b"); err == nil || !strings.Contains(err.Error(), "not a valid host") {
		t.Errorf("got %v", err)
	}
}
