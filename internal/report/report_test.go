package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
)

func TestFirstLine(t *testing.T) {
	pass := probe.Result{URL: "https://app/health", Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200,
		Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseTotal: 12400 * time.Microsecond})}
	fail := probe.Result{URL: "http://127.0.0.1:8080/health", Outcome: classify.Refused, Reason: classify.ConnRefused,
		Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseTotal: 400 * time.Microsecond})}
	if got := FirstLine(pass, false); got != "PASS ok https://app/health 200 12.4ms" {
		t.Errorf("pass: %q", got)
	}
	if got := FirstLine(fail, false); got != "FAIL refused conn_refused http://127.0.0.1:8080/health - 0.4ms" {
		t.Errorf("fail: %q", got)
	}
	if got := FirstLine(fail, true); !strings.Contains(got, "\x1b[") {
		t.Errorf("coloured line has no colour: %q", got)
	}
	if got, _ := Nagios([]probe.Result{fail}, NagiosThresholds{}); !regexp.MustCompile(`^HEALTHCTL CRITICAL - refused conn_refused http://127\.0\.0\.1:8080/health - 0\.4ms \| time=0\.000400s;;;0\n$`).MatchString(got) {
		t.Errorf("nagios: %q", got)
	}
}

func TestJSONAbsentPhases(t *testing.T) {
	r := probe.Result{URL: "u", Outcome: classify.Refused, Reason: classify.ConnRefused,
		Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseConnect: 1500 * time.Microsecond, probe.PhaseTotal: 2 * time.Millisecond})}
	var b bytes.Buffer
	if err := output.JSONLine(&b, NewResultJSON(r, nil, 5)); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if !strings.Contains(got, `"timings_ms":{"connect":1.5,"total":2}`) || strings.Contains(got, `"tls"`) || strings.Contains(got, "http_status") {
		t.Errorf("JSON: %s", got)
	}
}
