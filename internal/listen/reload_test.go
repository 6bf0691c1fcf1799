package listen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

// reloadable is a module set read from a file in a temporary directory,
// and the function that rewrites the file.
func reloadable(t *testing.T, body string) (*ModuleSet, func(string)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bb.yml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(body)
	load := func() (map[string]*blackbox.Module, error) {
		return blackbox.ReadModules(path, target.Defaults(), noEnv)
	}
	mods, err := load()
	if err != nil {
		t.Fatal(err)
	}
	return NewModuleSet(mods, path, load), write
}

// TestReload: POST /-/reload reads the file again; a bad file keeps the
// modules in force and says why (500, as blackbox answers).
func TestReload(t *testing.T) {
	ms, write := reloadable(t, "modules:\n  a:\n    prober: http\n")
	write("modules:\n  a:\n    prober: http\n  b:\n    prober: tcp\n")
	rec := httptest.NewRecorder()
	ms.ServeReload(rec, httptest.NewRequest("POST", "/-/reload", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), ": 2 modules") || ms.Modules()["b"] == nil {
		t.Fatalf("reload: %d %s", rec.Code, rec.Body)
	}
	write("modules:\n  a:\n    prober: http\n    http:\n      body_file: b.txt\n")
	rec = httptest.NewRecorder()
	ms.ServeReload(rec, httptest.NewRequest("POST", "/-/reload", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `failed to reload config: `) ||
		!strings.Contains(rec.Body.String(), `bb.yml:5: module "a": http.body_file: not supported`) ||
		!strings.Contains(rec.Body.String(), "keeping the 2 modules in force") || ms.Modules()["b"] == nil {
		t.Errorf("bad file: %d %s", rec.Code, rec.Body)
	}
	// Without a file: nothing to reload, said so.
	none := NewModuleSet(map[string]*blackbox.Module{}, "", nil)
	if _, err := none.Reload(); err == nil {
		t.Error("a reload without a file succeeded")
	}
}

// TestReloadRace: reloads while /probe-like readers look modules up.
func TestReloadRace(t *testing.T) {
	ms, _ := reloadable(t, "modules:\n  a:\n    prober: http\n")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if ms.Modules()["a"] == nil {
				t.Error("module a went missing during a reload")
				return
			}
		}
	}()
	for i := 0; i < 20; i++ {
		if _, err := ms.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	<-done
}

// TestConfig: /config shows the modules in force as the file has them,
// secrets masked.
func TestConfig(t *testing.T) {
	ms, _ := reloadable(t, `modules:
  b_auth:
    prober: http
    http:
      headers: {Authorization: "Bearer hunter2", X-Plain: shown}
      bearer_token: t0ken
      basic_auth: {username: u, password: pw1}
  a_tcp:
    prober: tcp
`)
	rec := httptest.NewRecorder()
	ms.ServeConfig(rec, httptest.NewRequest("GET", "/config", nil))
	body := rec.Body.String()
	for _, secret := range []string{"hunter2", "t0ken", "pw1"} {
		if strings.Contains(body, secret) {
			t.Errorf("/config shows %q\n%s", secret, body)
		}
	}
	for _, want := range []string{"modules:\n  a_tcp:\n    prober: tcp\n", "X-Plain: shown", "username: u", "bearer_token: <secret>", "password: <secret>"} {
		if !strings.Contains(body, want) {
			t.Errorf("/config lacks %q\n%s", want, body)
		}
	}
	if strings.Index(body, "a_tcp") > strings.Index(body, "b_auth") {
		t.Errorf("not by name\n%s", body)
	}
}

// TestDebug: debug=true's answer is the probe's log, the metrics and
// the module, the target's password masked.
func TestDebug(t *testing.T) {
	srv := httptest.NewServer(http.RedirectHandler("/ok", http.StatusFound))
	defer srv.Close()
	mods, err := blackbox.ParseModules("bb.yml", []byte("modules:\n  m:\n    prober: http\n    http:\n      follow_redirects: false\n"), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m := mods["m"]
	o, err := m.Options(strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1)+"/x", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	res := probe.Run(context.Background(), o)
	rec := httptest.NewRecorder()
	WriteDebug(rec, m, o, time.Second, &res, []byte("probe_success 0\n"))
	body := rec.Body.String()
	if strings.Contains(body, "s3cret") {
		t.Errorf("debug shows the password\n%s", body)
	}
	for _, want := range []string{"Logs for the probe:\n", `msg="Beginning probe" probe=http timeout_seconds=1`, `msg="Received HTTP response" status_code=302`,
		`msg="Redirect not followed"`, `level=error msg="Probe failed"`, "\nMetrics that would have been returned:\nprobe_success 0\n",
		"\nModule configuration:\nprober: http\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("debug lacks %q\n%s", want, body)
		}
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestConfigMasksSecretHeaders: /config masks the value of every header
// the watch keeps secret — its --secret-header names too, not only the
// default ones.
func TestConfigMasksSecretHeaders(t *testing.T) {
	base := target.Defaults()
	base.SecretHeader = []string{"X-Auth-Token"}
	mods, err := blackbox.ParseModules("bb.yml", []byte("modules:\n  m:\n    prober: http\n    http:\n      headers: {X-Auth-Token: s3cr3tvalue, X-Plain: shown}\n  icmp:\n    prober: icmp\n"), base, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	body := ConfigText(mods)
	if strings.Contains(body, "s3cr3tvalue") || !strings.Contains(body, "X-Auth-Token: <secret>") || !strings.Contains(body, "X-Plain: shown") {
		t.Errorf("/config:\n%s", body)
	}
}
