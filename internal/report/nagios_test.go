package report

import (
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/probe"
)

func nagiosResult(outcome classify.Outcome, total time.Duration, days int) probe.Result {
	r := probe.Result{URL: "https://a.invalid/h", Outcome: outcome, Reason: classify.OK, HTTPStatus: 200,
		Timings: probe.Timings{probe.PhaseTotal: total}}
	if outcome != classify.Pass {
		r.Reason, r.HTTPStatus = classify.ConnRefused, 0
	}
	if days >= 0 {
		r.TLS = &probe.TLSInfo{Chain: []probe.CertInfo{{DaysLeft: days}}}
	}
	return r
}

func TestNagiosState(t *testing.T) {
	th := NagiosThresholds{Warn: 500 * time.Millisecond, Crit: time.Second, CertWarn: 30, CertCrit: 7}
	for _, c := range []struct {
		name string
		r    probe.Result
		want int
	}{
		{"fast, cert far", nagiosResult(classify.Pass, 100*time.Millisecond, 90), exitcode.NagiosOK},
		{"plain http", nagiosResult(classify.Pass, 100*time.Millisecond, -1), exitcode.NagiosOK},
		{"slow", nagiosResult(classify.Pass, 600*time.Millisecond, 90), exitcode.NagiosWarning},
		{"too slow", nagiosResult(classify.Pass, 2*time.Second, 90), exitcode.NagiosCritical},
		{"cert soon", nagiosResult(classify.Pass, 100*time.Millisecond, 20), exitcode.NagiosWarning},
		{"cert very soon", nagiosResult(classify.Pass, 100*time.Millisecond, 3), exitcode.NagiosCritical},
		{"refused", nagiosResult(classify.Refused, 0, -1), exitcode.NagiosCritical},
		{"unknown", nagiosResult(classify.Unknown, 0, -1), exitcode.NagiosUnknown},
	} {
		if got, _ := NagiosState(c.r, th); got != c.want {
			t.Errorf("%s: state %d, want %d", c.name, got, c.want)
		}
	}
	if got, _ := NagiosState(nagiosResult(classify.Pass, time.Hour, 0), NagiosThresholds{}); got != exitcode.NagiosOK {
		t.Errorf("no thresholds: state %d", got)
	}
}

// TestNagiosWorstState: CRITICAL > WARNING > UNKNOWN > OK (monitoring-plugins'
// max_state_alt), whatever the order of the URLs.
func TestNagiosWorstState(t *testing.T) {
	th := NagiosThresholds{Warn: 500 * time.Millisecond}
	ok := nagiosResult(classify.Pass, time.Millisecond, -1)
	warn := nagiosResult(classify.Pass, time.Second, -1)
	unknown := nagiosResult(classify.Unknown, 0, -1)
	crit := nagiosResult(classify.Refused, 0, -1)
	for _, c := range []struct {
		rs   []probe.Result
		want int
	}{
		{[]probe.Result{ok, ok}, exitcode.NagiosOK},
		{[]probe.Result{ok, unknown}, exitcode.NagiosUnknown},
		{[]probe.Result{unknown, warn}, exitcode.NagiosWarning},
		{[]probe.Result{warn, crit, unknown}, exitcode.NagiosCritical},
		{[]probe.Result{crit, ok}, exitcode.NagiosCritical},
	} {
		text, code := Nagios(c.rs, th)
		if code != c.want {
			t.Errorf("%d results: code %d, want %d\n%s", len(c.rs), code, c.want, text)
		}
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if len(lines) != len(c.rs)+1 || strings.Count(text, "|") != 1 {
			t.Errorf("want a status line with one | and a line per URL:\n%s", text)
		}
		if !strings.HasPrefix(lines[0], "HEALTHCTL "+nagiosNames[c.want]+" - ") {
			t.Errorf("status line %q", lines[0])
		}
	}
}

func TestNagiosPerfdataLabelsAreUnique(t *testing.T) {
	a := nagiosResult(classify.Pass, time.Millisecond, 40)
	a.Timings[probe.PhaseConnect] = time.Microsecond
	text, _ := Nagios([]probe.Result{a, a, a}, NagiosThresholds{CertWarn: 30})
	_, perf, _ := strings.Cut(strings.SplitN(text, "\n", 2)[0], " | ")
	seen := map[string]bool{}
	for _, p := range strings.Fields(perf) {
		label, _, _ := strings.Cut(p, "=")
		if seen[label] {
			t.Errorf("label %q twice in %s", label, perf)
		}
		seen[label] = true
	}
	if !seen["time_3"] || !seen["cert_days_2"] || !strings.Contains(perf, "cert_days_1=40;30;") {
		t.Errorf("perfdata %s", perf)
	}
}

func TestNagiosEscapesPipes(t *testing.T) {
	r := nagiosResult(classify.Pass, time.Millisecond, -1)
	r.URL = "http://a.invalid/h?filter=a|b"
	text, _ := Nagios([]probe.Result{r}, NagiosThresholds{})
	if strings.Count(text, "|") != 1 || !strings.Contains(text, "filter=a%7Cb") {
		t.Errorf("%q", text)
	}
	if got := NagiosUnknownLine("bad | thing\nsecond"); got != "HEALTHCTL UNKNOWN - bad %7C thing second\n" {
		t.Errorf("%q", got)
	}
}
