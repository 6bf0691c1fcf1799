package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
)

// runWait runs `healthctl wait-healthy args...` in-process.
func runWait(t *testing.T, ctx context.Context, tty bool, environ map[string]string, args ...string) (int, string, string) {
	t.Helper()
	streams, out, errb := output.Test(tty)
	a := testFactory(streams, func(k string) string { return environ[k] })
	code := run(ctx, a, append([]string{"wait-healthy"}, args...))
	return code, out.String(), errb.String()
}

func TestWaitBypassFromEnvironment(t *testing.T) {
	for _, env := range []map[string]string{
		{"HEALTHCTL_BYPASS": "true"},
		{"HEALTHCTL_WAIT_HEALTHY_BYPASS": "true"},
	} {
		code, out, errb := runWait(t, t.Context(), false, env, "-o", "json", "http://127.0.0.1:1/")
		if code != 0 || !strings.Contains(errb, "bypassed") {
			t.Errorf("%v: exit %d, stderr %q", env, code, errb)
		}
		var j struct {
			Bypassed, Healthy bool
			Attempts          int
			ExitCode          int `json:"exit_code"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil || !j.Bypassed || j.Healthy || j.Attempts != 0 || j.ExitCode != 0 {
			t.Errorf("%v: JSON %s (%v)", env, out, err)
		}
	}
}

func TestWaitSignalSummary(t *testing.T) {
	streams, out, errb := output.Test(false)
	a := testFactory(streams, func(string) string { return "" })
	ctx, cancel := context.WithCancel(t.Context())
	// The signal comes when the second request arrives: one probe in flight
	// per URL, so the first has completed. No timing is assumed.
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			a.SetSignal(syscall.SIGTERM)
			cancel()
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	code := run(ctx, a, []string{"wait-healthy", "-o", "json", "--interval", "50ms", srv.URL})
	if code != exitcode.SIGTERM {
		t.Errorf("exit %d, want 143", code)
	}
	var j struct {
		Healthy  bool
		Attempts int
		ExitCode int `json:"exit_code"`
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil || j.Healthy || j.ExitCode != exitcode.SIGTERM || j.Attempts < 1 {
		t.Errorf("JSON %s (%v)", out, err)
	}
	if !strings.Contains(errb.String(), "healthctl: interrupted after ") {
		t.Errorf("stderr %q", errb)
	}
}
