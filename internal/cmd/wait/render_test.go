package waitcmd

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/wait"
)

func TestStatusLineFitsTheTerminal(t *testing.T) {
	var b bytes.Buffer
	p := newWaitProgress(&b, true, true, 80, []string{""}, 1, time.Minute)
	long := "https://a-very-long-preview-hostname-for-pr-12345.example.com/api/v1/health?verbose=1"
	p.Event(wait.Event{URL: long, Attempt: 3, Elapsed: 2 * time.Second, Changed: true,
		Result: probe.Result{Outcome: classify.Unreachable, Reason: classify.HTTPStatus, HTTPStatus: 503}})
	line := regexp.MustCompile(`\x1b\[[0-9;]*[mK]`).ReplaceAllString(strings.TrimPrefix(b.String(), "\r"), "")
	if len(line) >= 80 {
		t.Errorf("status line is %d columns on an 80-column terminal: %q", len(line), line)
	}
	// The host alone is longer than the room: the details give way, then
	// the host is cut in its middle; the status stays.
	if !strings.Contains(line, "...") || !strings.HasSuffix(line, " 503") || !strings.HasPrefix(line, "waiting 2.0s, 3 attempts: a-very-long-") {
		t.Errorf("status line: %q", line)
	}
}

func TestStatusLineKeepsHostAt80(t *testing.T) {
	var b strings.Builder
	p := newWaitProgress(&b, true, false, 80, []string{""}, 1, time.Minute)
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
	p = newWaitProgress(&b, true, false, 80, []string{""}, 1, time.Minute)
	p.Event(wait.Event{URL: "http://xn--bcher-kva.invalid/health", Attempt: 1, Result: probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused}})
	if !strings.Contains(b.String(), "http://bücher.invalid/health refused conn_refused") {
		t.Errorf("IDN host: %q", b.String())
	}
}
