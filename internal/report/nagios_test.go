package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/probe"
)

func nagiosResult(outcome classify.Outcome, total time.Duration, days int) probe.Result {
	r := probe.Result{URL: "https://a.invalid/h", Outcome: outcome, Reason: classify.OK, HTTPStatus: 200,
		Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseTotal: total})}
	if outcome != classify.Pass {
		r.Reason, r.HTTPStatus = classify.ConnRefused, 0
	}
	if days >= 0 {
		r.TLS = &probe.TLSInfo{Chain: []probe.CertInfo{{DaysLeft: days}}}
	}
	return r
}

func TestNagiosState(t *testing.T) {
	th := NagiosThresholds{Warn: mustRange(t, "0.5"), Crit: mustRange(t, "1"), CertWarn: 30, CertCrit: 7}
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
	th := NagiosThresholds{Warn: mustRange(t, "0.5")}
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
	a.Timings.Set(probe.PhaseConnect, time.Microsecond)
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
	if !seen["time_3"] || !seen["cert_days_2"] || !strings.Contains(perf, "cert_days_1=40;30:;") {
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

func mustRange(t *testing.T, s string) NagiosRange {
	t.Helper()
	r, err := ParseNagiosRange(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNagiosRange: the plugin guidelines' table, value by value.
func TestNagiosRange(t *testing.T) {
	for _, c := range []struct {
		in, text string
		alert    []float64
		ok       []float64
	}{
		{"10", "10", []float64{-1, 10.5, 11}, []float64{0, 5, 10}},
		{"10:", "10:", []float64{-5, 9.99}, []float64{10, 11, 1e9}},
		{"~:10", "~:10", []float64{10.01, 11}, []float64{-1e9, 0, 10}},
		{"10:20", "10:20", []float64{9, 21}, []float64{10, 15, 20}},
		{"@10:20", "@10:20", []float64{10, 15, 20}, []float64{9, 21}},
		{"1:2", "1:2", []float64{0.5, 2.5}, []float64{1, 1.5, 2}},
		{":5", "5", []float64{6, -1}, []float64{0, 5}},
		{"0.5", "0.5", []float64{0.6}, []float64{0.1}},
	} {
		r, err := ParseNagiosRange(c.in, nil)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if r.Text != c.text {
			t.Errorf("%q: text %q, want %q", c.in, r.Text, c.text)
		}
		for _, v := range c.alert {
			if !r.Alert(v) {
				t.Errorf("%q: %g should alert", c.in, v)
			}
		}
		for _, v := range c.ok {
			if r.Alert(v) {
				t.Errorf("%q: %g should not alert", c.in, v)
			}
		}
	}
	for _, bad := range []string{"", "@", "20:10", "x", "1:y", "~", "nan", "1:inf"} {
		if _, err := ParseNagiosRange(bad, nil); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// guidelinesRange is an independent reader of a perfdata threshold in the
// guidelines' syntax, as perfdata writers (PNP4Nagios, nagflux) read it:
// it says whether value v is in the alert zone.
func guidelinesRange(t *testing.T, s string, v float64) bool {
	t.Helper()
	inside := strings.HasPrefix(s, "@")
	s = strings.TrimPrefix(s, "@")
	lo, hi := 0.0, 1e308
	if a, b, ok := strings.Cut(s, ":"); ok {
		switch a {
		case "~":
			lo = -1e308
		case "":
		default:
			lo = parseF(t, a)
		}
		if b != "" {
			hi = parseF(t, b)
		}
	} else {
		hi = parseF(t, s)
	}
	in := v >= lo && v <= hi
	return in == inside
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	if _, err := fmt.Sscanf(s, "%g", &f); err != nil {
		t.Fatalf("perfdata threshold %q: %v", s, err)
	}
	return f
}

// TestNagiosPerfdataReadsAsTheCheck: a perfdata reader of the guidelines'
// range syntax comes to the check's own verdict on cert_days and time.
func TestNagiosPerfdataReadsAsTheCheck(t *testing.T) {
	th := NagiosThresholds{Warn: mustRange(t, "1:2"), Crit: mustRange(t, "@10:20"), CertWarn: 30, CertCrit: 14}
	for _, c := range []struct {
		days  int
		total time.Duration
	}{{10, 1500 * time.Millisecond}, {20, 1500 * time.Millisecond}, {40, 1500 * time.Millisecond}, {40, 500 * time.Millisecond}, {40, 15 * time.Second}, {14, 3 * time.Second}} {
		r := nagiosResult(classify.Pass, c.total, c.days)
		text, code := Nagios([]probe.Result{r}, th)
		_, perf, _ := strings.Cut(strings.TrimSpace(text), " | ")
		got := exitcode.NagiosOK
		for _, p := range strings.Fields(perf) {
			label, rest, _ := strings.Cut(p, "=")
			f := strings.Split(rest, ";")
			if label != "cert_days" && label != "time" {
				continue
			}
			v := parseF(t, strings.TrimRight(f[0], "s"))
			if len(f) > 2 && f[2] != "" && guidelinesRange(t, f[2], v) {
				got = exitcode.NagiosCritical
			} else if len(f) > 1 && f[1] != "" && guidelinesRange(t, f[1], v) && got != exitcode.NagiosCritical {
				got = exitcode.NagiosWarning
			}
		}
		if got != code {
			t.Errorf("%d days, %s: the check says %d, its perfdata reads %d: %s", c.days, c.total, code, got, text)
		}
	}
	text, _ := Nagios([]probe.Result{nagiosResult(classify.Pass, time.Millisecond, 10)}, th)
	if !strings.Contains(text, "cert_days=10;30:;14:") || !strings.Contains(text, ";1:2;@10:20;0") {
		t.Errorf("perfdata: %s", text)
	}
}

// TestNagiosHTTPGrading: check_http's grades: 4xx WARNING, 5xx and
// transport failures CRITICAL.
func TestNagiosHTTPGrading(t *testing.T) {
	for _, c := range []struct {
		outcome classify.Outcome
		reason  classify.Reason
		status  int
		want    int
	}{
		{classify.Unreachable, classify.HTTPStatus, 404, exitcode.NagiosWarning},
		{classify.Unreachable, classify.HTTPStatus, 429, exitcode.NagiosWarning},
		{classify.Unreachable, classify.HTTPStatus, 500, exitcode.NagiosCritical},
		{classify.Unreachable, classify.HTTPStatus, 503, exitcode.NagiosCritical},
		{classify.Unreachable, classify.ConditionFailed, 404, exitcode.NagiosCritical},
		{classify.Refused, classify.ConnRefused, 0, exitcode.NagiosCritical},
		{classify.Timeout, classify.HeadersTimeout, 0, exitcode.NagiosCritical},
		{classify.Pass, classify.OK, 404, exitcode.NagiosOK},
		// check_http's --onredirect=ok: an unfollowed 3xx, with or
		// without a Location.
		{classify.Unreachable, classify.Redirect, 301, exitcode.NagiosOK},
		{classify.Unreachable, classify.HTTPStatus, 302, exitcode.NagiosOK},
	} {
		r := probe.Result{URL: "http://a.invalid/", Outcome: c.outcome, Reason: c.reason, HTTPStatus: c.status, Timings: probe.Timings{}}
		if got, _ := NagiosState(r, NagiosThresholds{}); got != c.want {
			t.Errorf("%s %s %d: %d, want %d", c.outcome, c.reason, c.status, got, c.want)
		}
	}
}

// TestNagiosHTTPGradingWithTimes: as check_http takes the worse of the
// status's state and the time's, a 404 past -c is CRITICAL and a redirect
// past -w WARNING; with --expect-status (its -e) a 3xx or 4xx that fails
// it is CRITICAL.
func TestNagiosHTTPGradingWithTimes(t *testing.T) {
	th := NagiosThresholds{Warn: mustRange(t, "2"), Crit: mustRange(t, "5")}
	answer := func(reason classify.Reason, status int, total time.Duration) probe.Result {
		return probe.Result{URL: "http://a.invalid/", Outcome: classify.Unreachable, Reason: reason, HTTPStatus: status,
			Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseTotal: total})}
	}
	expect := th
	expect.ExpectStatus = true
	for _, c := range []struct {
		name string
		r    probe.Result
		th   NagiosThresholds
		want int
	}{
		{"404 fast", answer(classify.HTTPStatus, 404, time.Second), th, exitcode.NagiosWarning},
		{"404 past -w", answer(classify.HTTPStatus, 404, 3*time.Second), th, exitcode.NagiosWarning},
		{"404 past -c", answer(classify.HTTPStatus, 404, 6*time.Second), th, exitcode.NagiosCritical},
		{"301 past -w", answer(classify.Redirect, 301, 3*time.Second), th, exitcode.NagiosWarning},
		{"301 past -c", answer(classify.Redirect, 301, 6*time.Second), th, exitcode.NagiosCritical},
		{"301 -e", answer(classify.Redirect, 301, time.Second), expect, exitcode.NagiosCritical},
		{"404 -e", answer(classify.HTTPStatus, 404, time.Second), expect, exitcode.NagiosCritical},
		{"pass -e", nagiosResult(classify.Pass, time.Second, -1), expect, exitcode.NagiosOK},
	} {
		if got, _ := NagiosState(c.r, c.th); got != c.want {
			t.Errorf("%s: state %d, want %d", c.name, got, c.want)
		}
	}
}

// TestNagiosRedirectWording: a 3xx not followed reads as what it is —
// where it pointed, not followed — never "OK - unreachable redirect"; a
// followed chain says how many redirects it followed.
func TestNagiosRedirectWording(t *testing.T) {
	ms := func(d time.Duration) probe.Timings {
		var tm probe.Timings
		tm.Set(probe.PhaseTotal, d)
		return tm
	}
	for _, c := range []struct {
		name string
		r    probe.Result
		th   NagiosThresholds
		want string
	}{
		{"unfollowed, with a Location",
			probe.Result{URL: "http://a.invalid/", Outcome: classify.Unreachable, Reason: classify.Redirect, HTTPStatus: 302,
				Redirect: &probe.Redirect{Location: "https://a.invalid/login"}, Timings: ms(1200 * time.Microsecond)}, NagiosThresholds{},
			"HEALTHCTL OK - 302 redirect to https://a.invalid/login not followed: http://a.invalid/ 1.2ms"},
		{"unfollowed, no Location",
			probe.Result{URL: "http://a.invalid/", Outcome: classify.Unreachable, Reason: classify.HTTPStatus, HTTPStatus: 302, Timings: ms(time.Millisecond)}, NagiosThresholds{},
			"HEALTHCTL OK - 302 without a Location, not followed: http://a.invalid/ 1.0ms"},
		{"unfollowed, --expect-status",
			probe.Result{URL: "http://a.invalid/", Outcome: classify.Unreachable, Reason: classify.Redirect, HTTPStatus: 301,
				Redirect: &probe.Redirect{Location: "http://b.invalid/"}, Timings: ms(time.Millisecond)}, NagiosThresholds{ExpectStatus: true},
			"HEALTHCTL CRITICAL - 301 redirect to http://b.invalid/ not followed: http://a.invalid/ 1.0ms"},
		{"followed to a pass",
			probe.Result{URL: "http://a.invalid/", Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200,
				Hops: []probe.Hop{{URL: "http://a.invalid/", Status: 301, Location: "http://a.invalid/health"}}, Timings: ms(3 * time.Millisecond)}, NagiosThresholds{},
			"HEALTHCTL OK - ok http://a.invalid/ 200 3.0ms (followed 1 redirect)"},
		{"followed, the last one not",
			probe.Result{URL: "http://a.invalid/", Outcome: classify.Unreachable, Reason: classify.Redirect, HTTPStatus: 302,
				Redirect: &probe.Redirect{Location: "http://a.invalid/c"}, Timings: ms(3 * time.Millisecond),
				Hops: []probe.Hop{{Status: 302}, {Status: 302}}}, NagiosThresholds{},
			"HEALTHCTL OK - 302 redirect to http://a.invalid/c not followed: http://a.invalid/ 3.0ms (followed 2 redirects)"},
	} {
		text, _ := Nagios([]probe.Result{c.r}, c.th)
		line, _, _ := strings.Cut(text, " | ")
		if line != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, line, c.want)
		}
		if strings.Contains(line, "OK - unreachable") {
			t.Errorf("%s: %q", c.name, line)
		}
	}
}
