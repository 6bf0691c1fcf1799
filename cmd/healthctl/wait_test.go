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

func TestWaitTTYStatusLine(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) < 3 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	code, out, errb := runWait(t, t.Context(), true, nil, "--interval", "50ms", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb)
	}
	if !strings.Contains(out, "PASS") {
		t.Errorf("stdout %q, want the PASS line", out)
	}
	// 80 columns (the width assumed when unknown): the host stays visible,
	// the retry-after detail gives way first.
	for _, want := range []string{"\r\x1b[K", "waiting ", strings.TrimPrefix(srv.URL, "http://"), "unreachable", "http_status 503"} {
		if !strings.Contains(errb, want) {
			t.Errorf("stderr %q lacks %q", errb, want)
		}
	}
	if strings.Contains(errb, "\n") {
		t.Errorf("stderr %q: a terminal gets one line rewritten in place, no newlines", errb)
	}
	if !strings.HasSuffix(errb, "\r\x1b[K") {
		t.Errorf("stderr %q: the status line is cleared at the end", errb)
	}
}

func TestWaitLogLinesOnlyOnChange(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 6 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	code, _, errb := runWait(t, t.Context(), false, nil, "--interval", "20ms", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb)
	}
	lines := strings.Split(strings.TrimSpace(errb), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "unreachable http_status 503 (attempt 1)") || !strings.Contains(lines[1], "pass ok 200 (attempt 7)") {
		t.Errorf("stderr lines %q, want one per change of outcome", lines)
	}
}

func TestWaitQuiet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	// The ceiling is wide: on a loaded machine (-race, two cores) a first
	// probe must complete within it, or the wait ends as a timeout.
	code, out, errb := runWait(t, t.Context(), false, nil, "-q", "--timeout", "3s", "--interval", "500ms", srv.URL)
	if code != exitcode.Unreachable || out != "" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if want := "healthctl: no 2xx from " + srv.URL + " within 3s (last: unreachable, http_status after "; !strings.HasPrefix(errb, want) || strings.Count(errb, "\n") != 1 {
		t.Errorf("stderr %q, want only the final line %q...", errb, want)
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
