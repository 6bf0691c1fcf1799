package output

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/wait"
)

func TestDisplayURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://xn--bcher-kva.invalid:8080/health":      "http://bücher.invalid:8080/health",
		"http://b%C3%BCcher.invalid/health":             "http://bücher.invalid/health",
		"https://***@xn--bcher-kva.invalid/h?token=***": "https://***@bücher.invalid/h?token=***",
		"http://127.0.0.1:8080/xn--bcher-kva":           "http://127.0.0.1:8080/xn--bcher-kva",
		"http://[::1]:8080/":                            "http://[::1]:8080/",
		"http://app.invalid/a":                          "http://app.invalid/a",
		"not a url %zz":                                 "not a url %zz",
	} {
		if got := DisplayURL(in); got != want {
			t.Errorf("DisplayURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestElideURLKeepsTheHost(t *testing.T) {
	long := "https://preview-1234.staging.example.com:8443/api/v2/internal/health/readiness?verbose=1"
	for _, n := range []int{30, 50, 60, 80} {
		got := ElideURL(long, n)
		if utf8.RuneCountInString(got) > n {
			t.Errorf("%d: %q is %d columns", n, got, utf8.RuneCountInString(got))
		}
		if n >= 50 && !strings.HasPrefix(got, "https://preview-1234.staging.example.com:8443/") {
			t.Errorf("%d: the host was cut: %q", n, got)
		}
	}
	if got := ElideURL("http://bücher.invalid/a/very/long/path/to/health", 30); !strings.HasPrefix(got, "http://bücher.invalid/") || utf8.RuneCountInString(got) > 30 {
		t.Errorf("unicode host: %q", got)
	}
	if got := ElideURL("http://a.invalid/h", 80); got != "http://a.invalid/h" {
		t.Errorf("short URL changed: %q", got)
	}
}

func TestStatusLineKeepsHostAt80(t *testing.T) {
	var b strings.Builder
	p := NewWaitProgress(&b, true, false, 80, 1, 1)
	ra := 2 * time.Second
	p.Event(wait.Event{URL: "https://preview-1234.staging.example.com:8443/api/v2/internal/health/readiness", Attempt: 12,
		Result: probe.Result{Outcome: classify.Unreachable, Reason: classify.HTTPStatus, HTTPStatus: 503, RetryAfter: &ra}})
	p.Tick(12 * time.Second)
	lines := strings.Split(b.String(), "\r\x1b[K")
	last := lines[len(lines)-1]
	if n := utf8.RuneCountInString(last); n > 79 {
		t.Errorf("%d columns: %q", n, last)
	}
	if !strings.Contains(last, "preview-1234.staging.example.com:8443") || !strings.Contains(last, "503") {
		t.Errorf("host or status lost: %q", last)
	}
	b.Reset()
	p = NewWaitProgress(&b, true, false, 80, 1, 1)
	p.Event(wait.Event{URL: "http://xn--bcher-kva.invalid/health", Attempt: 1, Result: probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused}})
	if !strings.Contains(b.String(), "http://bücher.invalid/health refused conn_refused") {
		t.Errorf("IDN host: %q", b.String())
	}
}
