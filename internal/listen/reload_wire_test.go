package listen

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/probe"
)

// TestModuleSetWired: through the listener's handler, /probe takes its
// modules from the set in force; POST /-/reload changes them (GET is
// 405); /config shows them; debug=true answers the probe's log.
func TestModuleSetWired(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "UP") }))
	defer srv.Close()
	ms, write := reloadable(t, "modules:\n  a:\n    prober: http\n")
	u, _ := url.Parse(srv.URL)
	allow, _ := ParseAllow([]string{u.Host})
	h := New(Config{Interval: time.Minute, Probe: probe.Run, ModuleSet: ms, Allow: allow}).Handler()
	q := "/probe?target=" + url.QueryEscape(srv.URL)
	if code, body := get(t, h, q+"&module=a"); code != 200 || !strings.Contains(body, "\nprobe_success 1\n") {
		t.Fatalf("a: %d %s", code, body)
	}
	if code, body := get(t, h, q+"&module=a&debug=true"); code != 200 || !strings.HasPrefix(body, "Logs for the probe:\n") || !strings.Contains(body, `msg="Probe succeeded"`) {
		t.Errorf("debug: %d %s", code, body)
	}
	if code, _ := get(t, h, q+"&module=b"); code != 400 {
		t.Errorf("b before the reload: %d", code)
	}
	write("modules:\n  b:\n    prober: http\n    http:\n      valid_status_codes: [204]\n")
	if code, _ := get(t, h, "/-/reload"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /-/reload: %d", code)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/-/reload", nil))
	if rec.Code != 200 {
		t.Fatalf("POST /-/reload: %d %s", rec.Code, rec.Body)
	}
	if code, body := get(t, h, q+"&module=b"); code != 200 || !strings.Contains(body, "\nprobe_success 0\n") {
		t.Errorf("b after the reload: %d %s", code, body)
	}
	if code, body := get(t, h, "/config"); code != 200 || body != "modules:\n  b:\n    prober: http\n    http:\n      valid_status_codes: [204]\n" {
		t.Errorf("/config: %d %q", code, body)
	}
}
