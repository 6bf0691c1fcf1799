package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/probe/httpprobe"
	"github.com/spf13/pflag"
)

func buildFlags(t *testing.T, env map[string]string, args ...string) (*cli.Template, error) {
	t.Helper()
	var f cli.ProbeFlags
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Build(func(k string) string { return env[k] })
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
	o := tm.Options()
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
	if o.Method != "POST" || o.Header.Get("Content-Type") != "application/json" {
		t.Errorf("method %s ct %q", o.Method, o.Header.Get("Content-Type"))
	}
	// --data @FILE is streamed from the file (BodyFile, with its size),
	// not read into Body: the request's body is the file's bytes.
	if o.BodyFile != df || o.BodySize != int64(len(`{"ping":1}`)) || len(o.Body) != 0 {
		t.Errorf("--data @file: BodyFile %q (%d bytes), Body %q; want %q, 10 bytes, none", o.BodyFile, o.BodySize, o.Body, df)
	}
	if u, err := tm.ForURL("http://127.0.0.1:1/health"); err != nil {
		t.Error(err)
	} else if req, err := httpprobe.NewRequest(context.Background(), u); err != nil {
		t.Error(err)
	} else {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil || string(body) != `{"ping":1}` || req.ContentLength != 10 {
			t.Errorf("the request's body %q (%v), Content-Length %d; want the file's", body, err, req.ContentLength)
		}
	}
	if !o.HasUser || o.User != "admin" || o.Password != "hunter22" {
		t.Errorf("-u: %q %q", o.User, o.Password)
	}
	text := o.Redactor.String("Bearer filetoken and hunter22")
	if strings.Contains(text, "filetoken") || strings.Contains(text, "hunter22") {
		t.Errorf("secrets from -H @file / -u not registered: %s", text)
	}
	// The Host header names the TLS server too (unless --servername).
	u, err := tm.ForURL("https://127.0.0.1:8443/health")
	if err != nil || u.TLSConfig.ServerName != "app.example" {
		t.Errorf("TLS server name %q (%v)", u.TLSConfig.ServerName, err)
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
