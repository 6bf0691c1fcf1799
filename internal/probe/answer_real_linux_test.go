package probe

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/fixture"
)

// realAnswer is one answer of a real server to the probe's own request.
type realAnswer struct {
	name string
	url  string
	// common: the answer must take readResponse's own parser (the
	// answers TestCurlDiff's agreement on these servers stands for);
	// false: it is only read both ways.
	common bool
}

// TestReadResponseRealServers asks real servers from Debian (nginx,
// HAProxy, Caddy, Apache httpd; .ci/deps/curl-trust.sh installs them,
// TestCurlDiff probes them) and the application stacks of drain-test's
// differential test (testdata/stacks: gunicorn with Flask, uvicorn with
// FastAPI, Node's express, the JDK's HttpServer; .ci/deps/drain-truth.sh
// installs them) what the plain exchange asks, with its own
// encoder, and reads each answer as the probe does: readResponse must give
// what http.ReadResponse gives, whole and handed over in random pieces, and
// the answers the sweeps of these servers get most (a 200, their own error
// pages, a redirect, a static file) must be the common answer that
// readResponse parses itself. A server upgrade that changes the shape of
// its answers fails here, naming the answer, before anyone relies on the
// fast path being tested by TestCurlDiff.
func TestReadResponseRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	dir := t.TempDir()
	var answers []realAnswer
	for _, s := range []struct {
		prog  string
		start func(t *testing.T, dir string) []realAnswer
	}{
		{"nginx", realNginx}, {"haproxy", realHAProxy}, {"caddy", realCaddy}, {"apache2", realApache},
	} {
		if !fixture.Installed(t, s.prog, ".ci/deps/curl-trust.sh") {
			continue
		}
		d := filepath.Join(dir, s.prog)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, s.start(t, d)...)
	}
	for _, app := range fixture.AppStacks {
		port, ok := app.Start(t, filepath.Join("..", "..", "testdata", "stacks"), dir)
		if !ok {
			continue
		}
		// The JDK's HttpServer does not say Connection: close to a
		// request that does (it closes all the same), so its answers
		// are left to net/http: they are read, not asserted common.
		common := app.Name != "jdk-httpserver"
		for _, path := range []string{"/live", "/ready", "/app", "/missing"} {
			answers = append(answers, realAnswer{app.Name + path, realURL(port, path), common})
		}
	}
	r := rand.New(rand.NewPCG(27, 4))
	for _, a := range answers {
		u, err := url.Parse(a.url)
		if err != nil {
			t.Fatal(err)
		}
		o := &Options{URL: u, Method: http.MethodGet, Header: http.Header{}, UserAgent: "healthctl/test"}
		req, err := NewRequest(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		out, ok := appendRequest(nil, req, "Accept-Encoding: gzip\r\nConnection: close\r\n")
		if !ok {
			t.Fatalf("%s: the probe's encoder does not take %s", a.name, a.url)
		}
		raw, err := exchangeRaw(u.Host, out)
		if err != nil {
			t.Errorf("%s: %v", a.name, err)
			continue
		}
		for i := range 20 {
			// The answer whole, then in random pieces: both parsers get
			// the same pieces.
			seed := r.Uint64()
			src := func() io.Reader {
				if i == 0 {
					return strings.NewReader(raw)
				}
				return &chunks{raw, rand.New(rand.NewPCG(seed, 1))}
			}
			got, want, claimed := readBoth(src, req, answerBuffer)
			if got != want {
				t.Errorf("%s: answer %q:\nreadResponse: %s\nReadResponse: %s", a.name, raw, got, want)
				break
			}
			if i == 0 {
				t.Logf("%-26s common=%-5v %q", a.name, claimed, firstLine(raw))
				if a.common && !claimed {
					t.Errorf("%s: not the common answer, so readResponse leaves it to net/http and TestCurlDiff's cases on this server no longer test its own parser; the answer:\n%q", a.name, raw)
				}
			}
		}
	}
}

// exchangeRaw writes request to hostport and reads the answer to EOF, all
// within 5 s.
func exchangeRaw(hostport string, request []byte) (string, error) {
	c, err := net.DialTimeout("tcp", hostport, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(request); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, 1<<20))
	return string(b), err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\r\n")
	return line
}

func realPort(t *testing.T) int {
	p, err := fixture.UnusedPort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func realWrite(t *testing.T, path, text string) string {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func realURL(port int, path string) string { return "http://127.0.0.1:" + strconv.Itoa(port) + path }

func realNginx(t *testing.T, d string) []realAnswer {
	p, closed := realPort(t), realPort(t)
	realWrite(t, filepath.Join(d, "file.txt"), "ok\n")
	conf := realWrite(t, filepath.Join(d, "nginx.conf"), fixture.NginxPrelude(d)+fmt.Sprintf(`  proxy_connect_timeout 1s;
  server {
    listen 127.0.0.1:%[2]d;
    location = /health { return 200 "ok\n"; }
    location = /503 { return 503; }
    location = /redirect { return 302 /health; }
    location = /file.txt { root %[1]s; }
    location = /dead { proxy_pass http://127.0.0.1:%[3]d; }
  }
}
`, d, p, closed))
	if !fixture.StartDaemon(t, fixture.Daemon{Name: "nginx", Dir: d, Ports: []int{p}, Prog: "nginx",
		Args: []string{"-p", d, "-c", conf, "-e", filepath.Join(d, "error.log")}}) {
		return nil
	}
	return []realAnswer{
		{"nginx/200", realURL(p, "/health"), true},
		{"nginx/503-error-page", realURL(p, "/503"), true},
		{"nginx/302", realURL(p, "/redirect"), true},
		{"nginx/static-file", realURL(p, "/file.txt"), true},
		{"nginx/404-error-page", realURL(p, "/missing"), true},
		{"nginx/502-upstream-dead", realURL(p, "/dead"), true},
	}
}

func realHAProxy(t *testing.T, d string) []realAnswer {
	p, closed := realPort(t), realPort(t)
	conf := realWrite(t, filepath.Join(d, "haproxy.cfg"), fixture.HAProxyPrelude(16)+fmt.Sprintf(`frontend f
  bind 127.0.0.1:%d
  http-request return status 200 content-type text/plain string "ok" if { path /health }
  default_backend dead
backend dead
  server s1 127.0.0.1:%d
`, p, closed))
	if !fixture.StartDaemon(t, fixture.Daemon{Name: "haproxy", Dir: d, Ports: []int{p}, Prog: "haproxy", Args: []string{"-db", "-f", conf}}) {
		return nil
	}
	return []realAnswer{
		{"haproxy/200-return", realURL(p, "/health"), true},
		{"haproxy/503-backend-dead", realURL(p, "/dead"), true},
	}
}

func realCaddy(t *testing.T, d string) []realAnswer {
	p := realPort(t)
	conf := realWrite(t, filepath.Join(d, "caddy.json"), fmt.Sprintf(`{
  "admin": {"disabled": true},
  "logging": {"logs": {"default": {"level": "ERROR"}}},
  "storage": {"module": "file_system", "root": %q},
  "apps": {"http": {"servers": {"plain": {
    "listen": ["127.0.0.1:%d"],
    "automatic_https": {"disable": true},
    "routes": [
      {"match": [{"path": ["/health"]}], "handle": [{"handler": "static_response", "status_code": 200, "body": "ok\n"}]},
      {"match": [{"path": ["/503"]}], "handle": [{"handler": "static_response", "status_code": 503, "body": "down\n"}]}
    ]
  }}}}
}
`, filepath.Join(d, "data"), p))
	env := append(os.Environ(), "HOME="+d, "XDG_DATA_HOME="+filepath.Join(d, "data"), "XDG_CONFIG_HOME="+filepath.Join(d, "config"))
	if !fixture.StartDaemon(t, fixture.Daemon{Name: "caddy", Dir: d, Env: env, Ports: []int{p}, Prog: "caddy", Args: []string{"run", "--config", conf}}) {
		return nil
	}
	return []realAnswer{
		{"caddy/200", realURL(p, "/health"), true},
		{"caddy/503", realURL(p, "/503"), true},
		// Caddy's empty 200 for a path no route matches.
		{"caddy/no-route", realURL(p, "/missing"), true},
	}
}

func realApache(t *testing.T, d string) []realAnswer {
	p := realPort(t)
	docs := filepath.Join(d, "htdocs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	realWrite(t, filepath.Join(docs, "health"), "ok\n")
	user := ""
	if os.Geteuid() == 0 {
		// apache drops root for www-data, which must read the files.
		user = "User www-data\nGroup www-data\n"
		for dir := docs; dir != "/" && strings.HasPrefix(dir, os.TempDir()); dir = filepath.Dir(dir) {
			os.Chmod(dir, 0o755)
		}
	}
	mods := "/usr/lib/apache2/modules"
	conf := realWrite(t, filepath.Join(d, "httpd.conf"), fmt.Sprintf(`ServerRoot %[1]s
ServerName localhost
%[2]sLoadModule mpm_event_module %[3]s/mod_mpm_event.so
LoadModule authz_core_module %[3]s/mod_authz_core.so
PidFile %[1]s/httpd.pid
ErrorLog %[1]s/error.log
Listen 127.0.0.1:%[4]d
DocumentRoot %[5]s
<Directory %[5]s>
  Require all granted
</Directory>
`, d, user, mods, p, docs))
	if !fixture.StartDaemon(t, fixture.Daemon{Name: "apache", Dir: d, Ports: []int{p}, Prog: "apache2", Args: []string{"-f", conf, "-DFOREGROUND"}}) {
		return nil
	}
	return []realAnswer{
		{"apache/static-file", realURL(p, "/health"), true},
		{"apache/404", realURL(p, "/missing"), true},
	}
}
