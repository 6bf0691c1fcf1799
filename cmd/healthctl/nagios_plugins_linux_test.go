package main

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
	"github.com/healthctl/healthctl/internal/output"
)

// pluginsDir is where Debian's monitoring-plugins install check_http and
// check_curl.
const pluginsDir = "/usr/lib/nagios/plugins/"

// TestNagiosAgainstPlugins: -o nagios grades the servers the docs' Nagios
// section names as check_http and check_curl grade them, with the docs'
// command line (-t 8 -w 2 -c 5): a 2.5 s answer is WARNING (the budget is
// -t's, not the probe's 2 s read window: CRITICAL timeout before), an
// unfollowed 3xx is OK with or without a Location, a 4xx WARNING, a 5xx
// and a refused port CRITICAL; with --expect-status (-e) a 3xx and a 4xx
// that fail it are CRITICAL. healthctl's states are checked always; the
// plugins', on the same servers, when they are installed (CI installs
// them: .ci/deps/integrations.sh).
func TestNagiosAgainstPlugins(t *testing.T) {
	besideScripts(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			select {
			case <-time.After(2500 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		case "/301":
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
			w.WriteHeader(http.StatusMovedPermanently)
		case "/302-no-location":
			w.WriteHeader(http.StatusFound)
		case "/404":
			w.WriteHeader(http.StatusNotFound)
		case "/503":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	closed, err := fixture.NewClosedPort(fixture.DeferFunc(t.Cleanup))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		base, path string
		extra      []string // healthctl's, then the plugins' (-e)
		pluginArgs []string
		want       int // 0 OK, 1 WARNING, 2 CRITICAL
	}{
		{srv.URL, "/", nil, nil, 0},
		{srv.URL, "/slow", nil, nil, 1},
		{srv.URL, "/301", nil, nil, 0},
		{srv.URL, "/302-no-location", nil, nil, 0},
		{srv.URL, "/404", nil, nil, 1},
		{srv.URL, "/503", nil, nil, 2},
		{closed.URL(), "/", nil, nil, 2},
		{srv.URL, "/301", []string{"--expect-status", "200"}, []string{"-e", "200"}, 2},
		{srv.URL, "/404", []string{"--expect-status", "200"}, []string{"-e", "200"}, 2},
	}
	// healthctl's side and each plugin's are subtests of their own: a
	// plugin that is missing (skipped outside CI, failed in CI) or broken
	// fails its own cases only.
	t.Run("healthctl", func(t *testing.T) {
		var wg sync.WaitGroup
		for _, c := range cases {
			wg.Go(func() {
				args := append([]string{"probe", "-o", "nagios", "-t", "8", "-w", "2", "-c", "5"}, c.extra...)
				streams, out, _ := output.Test(false)
				a := testFactory(streams, func(string) string { return "" })
				if code := run(t.Context(), a, append(args, c.base+c.path)); code != c.want {
					t.Errorf("healthctl %s%s %v: exit %d, want %d: %s", c.base, c.path, c.extra, code, c.want, out)
				}
				// An unfollowed 3xx says where it pointed, never
				// "OK - unreachable redirect".
				if c.path == "/301" && c.extra == nil && !strings.HasPrefix(out.String(), "HEALTHCTL OK - 301 redirect to http://127.0.0.1:1/elsewhere not followed: "+c.base+"/301 ") {
					t.Errorf("healthctl %s/301: %s", c.base, out)
				}
				if strings.Contains(out.String(), "OK - unreachable") {
					t.Errorf("healthctl %s%s: %s", c.base, c.path, out)
				}
			})
		}
		wg.Wait()
	})
	for _, p := range []string{"check_http", "check_curl"} {
		t.Run(p, func(t *testing.T) {
			stackfix.Require(t, stacksDir, pluginsDir+p)
			var wg sync.WaitGroup
			for _, c := range cases {
				wg.Go(func() {
					u, _ := url.Parse(c.base)
					host, port, _ := net.SplitHostPort(u.Host)
					cmd := exec.CommandContext(t.Context(), pluginsDir+p, append([]string{"-H", host, "-p", port, "-u", c.path, "-t", "8", "-w", "2", "-c", "5"}, c.pluginArgs...)...)
					b, err := cmd.Output()
					code := 0
					var ee *exec.ExitError
					if errors.As(err, &ee) {
						code = ee.ExitCode()
					} else if err != nil {
						t.Errorf("%s: %v", p, err)
						return
					}
					if code >= 126 {
						// Not a verdict: the plugin could not start (a
						// library missing: .ci/deps/integrations.sh).
						t.Errorf("%s does not start (exit %d): %s", p, code, strings.TrimSpace(string(ee.Stderr)))
						return
					}
					if code != c.want {
						t.Errorf("%s %s %v: exit %d, want %d (healthctl's): %s", p, c.path, c.pluginArgs, code, c.want, strings.TrimSpace(string(b)))
					}
				})
			}
			wg.Wait()
		})
	}
}
