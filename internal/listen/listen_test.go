package listen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/listen/board"
	"github.com/healthctl/healthctl/internal/output"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/metrics"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/target"
	"github.com/healthctl/healthctl/internal/watch"
)

// t0 is in a zone of its own: /status.json must say its times in UTC
// whatever the host's zone (TestStatusAgreesWithMetrics).
var t0 = time.Date(2026, 12, 3, 13, 0, 0, 0, time.FixedZone("CET", 3600))

// hostile is server text a page must show as text: markup, an attribute
// breakout, a terminal escape, a C1 CSI and a bidi override.
const hostile = "<script>alert(1)</script>\"' onmouseover=x \x1b[31m\u009b2J\u202eevil &amp;"

// sweepInput is sweep n over a passing, a refused (hostile error text and
// name) and a TLS-failing target, with a fleet hold on the refused one.
func sweepInput(n int64, refusedAction policy.Action) metrics.Input {
	at := t0.Add(time.Duration(n) * time.Minute)
	eps := []*watch.Endpoint{
		{Name: "web", URL: "http://127.0.0.1:1/health", Recover: true},
		{Name: "api " + hostile, URL: "http://***@127.0.0.1:2/health", Recover: true},
		{Name: "tls", URL: "https://127.0.0.1:3/", Recover: true},
	}
	items := []watch.Item{
		{Endpoint: eps[0], Result: probe.Result{Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200, Started: at},
			Decision: policy.Decision{Action: policy.Stay, Why: "pass"}},
		{Endpoint: eps[1], Result: probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused, Error: "connect: " + hostile + "\nsecond line", Started: at},
			Decision: policy.Decision{Action: refusedAction, Why: "why " + hostile}, Streak: int(n)},
		{Endpoint: eps[2], Result: probe.Result{Outcome: classify.TLS, Reason: classify.TLSExpired, Error: "x509: expired", Started: at},
			Decision: policy.Decision{Action: policy.PendingTLS, Why: "tls pending"}},
	}
	st := state.New()
	st.Sweeps = n
	st.Targets[eps[0].Name] = state.Entry{}
	st.Targets[eps[1].Name] = state.Entry{History: policy.History{Streak: int(n)}, Redeploys: 1, LastRedeploy: t0}
	st.Targets[eps[2].Name] = state.Entry{}
	s := &watch.Sweep{N: n, Started: at, Duration: time.Second, Targets: 3, Probed: 3, Pass: 1, Fail: 2, Items: items}
	if refusedAction == policy.HoldFleet {
		s.HeldFleet, s.HoldWhy = 1, "3 of 3 targets failed decisively at once "+hostile
	}
	return metrics.Input{Latest: items, State: st, Sweep: s}
}

func publish(t *testing.T, svc *Service, in metrics.Input) {
	t.Helper()
	if err := svc.Publish(in); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Body.String()
}

// TestStatusAgreesWithMetrics: for every target, /status.json's outcome,
// reason, streak and decision are /metrics' healthctl_probe_result,
// healthctl_streak and healthctl_decision, and probe_success matches.
func TestStatusAgreesWithMetrics(t *testing.T) {
	now := t0.Add(time.Hour)
	svc := New(Config{Interval: time.Minute, Now: func() time.Time { return now }})
	for n := int64(1); n <= 3; n++ {
		publish(t, svc, sweepInput(n, policy.IgnoreBlip))
	}
	h := svc.Handler()
	_, body := get(t, h, "/status.json")
	st := readStatus(t, body)
	if !strings.Contains(body, `"started": "2026-12-03T12:03:00Z"`) || !strings.Contains(body, `"last_probe":"2026-12-03T12:03:00Z"`) {
		t.Errorf("/status.json's times are not in UTC: %s", body)
	}
	_, mtext := get(t, h, "/metrics")
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(mtext))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	CheckAgreement(t, st, fams)
	if len(st.lines) != 3 || st.Sweep == nil || st.Sweep.N != 3 {
		t.Fatalf("status: %+v", st)
	}
	if got := st.Board[1].Timeline.Len(); got != 3 {
		t.Errorf("timeline has %d cells after 3 sweeps", got)
	}
	if !st.Board[1].Since.Equal(t0.Add(time.Minute)) {
		t.Errorf("since %v: want the first sweep's probe (the outcome never changed)", st.Board[1].Since)
	}
}

// CheckAgreement fails t unless every target of st says what fams say.
func CheckAgreement(t testing.TB, st *statusDoc, fams map[string]*metricFamily) {
	t.Helper()
	label := func(m *metricSample, k string) string {
		for _, l := range m.GetLabel() {
			if l.GetName() == k {
				return l.GetValue()
			}
		}
		return ""
	}
	byTarget := func(name string) map[string]*metricSample {
		out := map[string]*metricSample{}
		f := fams[name]
		if f == nil {
			return out
		}
		for _, m := range f.GetMetric() {
			if name == "healthctl_decision" && m.GetGauge().GetValue() != 1 {
				continue
			}
			out[label(m, "target")] = m
		}
		return out
	}
	result, streak, decision, success := byTarget("healthctl_probe_result"), byTarget("healthctl_streak"), byTarget("healthctl_decision"), byTarget("probe_success")
	for _, tg := range st.lines {
		// The label is the name escaped for a label (through
		// output.Untrusted); the JSON's is the name as it is.
		tg.Target = output.Untrusted(tg.Target)
		r := result[tg.Target]
		if r == nil {
			t.Errorf("target %q: in /status.json, not in healthctl_probe_result", tg.Target)
			continue
		}
		if o, why := label(r, "outcome"), label(r, "reason"); o != string(tg.Outcome) || why != string(tg.Reason) {
			t.Errorf("target %q: status %s/%s, metrics %s/%s", tg.Target, tg.Outcome, tg.Reason, o, why)
		}
		if s := streak[tg.Target]; s == nil || int(s.GetGauge().GetValue()) != tg.Streak {
			t.Errorf("target %q: status streak %d, metrics %v", tg.Target, tg.Streak, s)
		}
		if d := decision[tg.Target]; d == nil || tg.Decision == nil || label(d, "decision") != string(tg.Decision.Action) {
			t.Errorf("target %q: status decision %v, metrics %v", tg.Target, tg.Decision, d)
		}
		if s := success[tg.Target]; s == nil || (s.GetGauge().GetValue() == 1) != (tg.Outcome == classify.Pass) {
			t.Errorf("target %q: status outcome %s, probe_success %v", tg.Target, tg.Outcome, s)
		}
	}
	if len(result) != len(st.lines) {
		t.Errorf("metrics have %d targets, status %d", len(result), len(st.lines))
	}
}

// TestPageEscapesAndOrders: hostile server text is text in the page (no
// tag, no attribute breakout, no raw control character); failing targets
// come first; the fleet hold is above the rows.
func TestPageEscapesAndOrders(t *testing.T) {
	svc := New(Config{Interval: time.Minute, Now: func() time.Time { return t0.Add(time.Hour) }})
	publish(t, svc, sweepInput(1, policy.HoldFleet))
	code, page := get(t, svc.Handler(), "/")
	if code != 200 {
		t.Fatal(code)
	}
	for _, bad := range []string{"<script", "\x1b", "\u009b", "\u202e", "\" onmouseover", "' onmouseover"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q raw", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", `\x1b[31m`, `\u009b2J`, `\u202e`, "&amp;amp;",
		`<meta name="viewport"`, `<meta http-equiv="refresh"`, "conn_refused", "tls_expired", "second line"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	hold, api, tls, web := strings.Index(page, `id="hold"`), strings.Index(page, `data-target="api `), strings.Index(page, `data-target="tls"`), strings.Index(page, `data-target="web"`)
	if !(hold >= 0 && hold < api && api < web && tls < web) {
		t.Errorf("order: hold %d, api %d, tls %d, web %d: want the hold, then the failing, then the passing", hold, api, tls, web)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "src=") || strings.Contains(page, "href=\"http") {
		t.Error("the page loads something")
	}
}

// TestHealthz: 200 while sweeps complete, 503 once none has for two
// intervals and the longest sweep.
func TestHealthz(t *testing.T) {
	now := t0
	svc := New(Config{Interval: time.Minute, MaxSweep: 4 * time.Second, Now: func() time.Time { return now }})
	h := svc.Handler()
	if code, body := get(t, h, "/healthz"); code != 200 || !strings.HasPrefix(body, "ok: starting") {
		t.Errorf("before a sweep: %d %q", code, body)
	}
	now = now.Add(3 * time.Minute)
	if code, _ := get(t, h, "/healthz"); code != 503 {
		t.Errorf("no sweep for 3m: %d", code)
	}
	publish(t, svc, sweepInput(1, policy.Stay))
	if code, body := get(t, h, "/healthz"); code != 200 || !strings.Contains(body, "sweep 1") {
		t.Errorf("after a sweep: %d %q", code, body)
	}
	now = now.Add(2*time.Minute + 15*time.Second)
	if code, body := get(t, h, "/healthz"); code != 503 || !strings.HasPrefix(body, "stuck:") {
		t.Errorf("a sweep 2m15s ago: %d %q", code, body)
	}
}

// TestTimelineBounded: the ring keeps the last TimelineLen sweeps, oldest
// first, and a target gone from the targets drops out.
func TestTimelineBounded(t *testing.T) {
	svc := New(Config{Interval: time.Minute})
	for n := int64(1); n <= board.TimelineLen+5; n++ {
		a := policy.IgnoreBlip
		if n == board.TimelineLen+5 {
			a = policy.Redeploy
		}
		publish(t, svc, sweepInput(n, a))
	}
	st := svc.Status()
	tl := st.Targets[1].Timeline.Cells()
	if len(tl) != board.TimelineLen || tl[len(tl)-1].Action != policy.Redeploy || tl[0].Action != policy.IgnoreBlip {
		t.Fatalf("timeline %v", tl)
	}
	in := sweepInput(board.TimelineLen+6, policy.Stay)
	in.Latest = in.Latest[:1]
	publish(t, svc, in)
	if svc.board.Tracked() != 1 {
		t.Errorf("%d tracks kept for 1 target", svc.board.Tracked())
	}
}

func fakeProber(seen *[]string) probe.Prober {
	return func(_ context.Context, o *scheme.Options) probe.Result {
		*seen = append(*seen, o.URL.String())
		if o.URL.Port() == "1" {
			return probe.Result{Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200}
		}
		return probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused}
	}
}

// TestProbeEndpoint: allowed targets are probed with the module and
// answered in blackbox's names; a target outside --probe-allow is 403
// (never probed), an unknown module 400, past the rate 429.
func TestProbeEndpoint(t *testing.T) {
	var seen []string
	mods, err := blackbox.DefaultModules(target.Defaults(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	u1, _ := url.Parse("http://127.0.0.1:1/health")
	u2, _ := url.Parse("http://127.0.0.1:2/health")
	now := t0
	svc := New(Config{Interval: time.Minute, Probe: fakeProber(&seen), Modules: mods, Allow: AllowURLs([]*url.URL{u1, u2}), Rate: 6,
		Now: func() time.Time { return now }})
	h := svc.Handler()
	code, body := get(t, h, "/probe?target="+url.QueryEscape("http://127.0.0.1:1/health")+"&module=http_2xx")
	if code != 200 || !strings.Contains(body, "\nprobe_success 1\n") || !strings.Contains(body, `healthctl_probe_outcome{outcome="pass",reason="ok"} 1`) {
		t.Errorf("pass: %d\n%s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := p.TextToMetricFamilies(strings.NewReader(body)); err != nil {
		t.Errorf("does not parse: %v", err)
	}
	code, body = get(t, h, "/probe?target=127.0.0.1:2/health")
	if code != 200 || !strings.Contains(body, "\nprobe_success 0\n") || !strings.Contains(body, `reason="conn_refused"`) {
		t.Errorf("refused (no scheme: http://): %d\n%s", code, body)
	}
	for path, want := range map[string]int{
		"/probe?target=" + url.QueryEscape("http://127.0.0.1:9/health"): 403,
		"/probe?target=" + url.QueryEscape("http://10.0.0.1:1/"):        403,
		"/probe?target=x&module=nope":                                   400,
		"/probe":                                                        400,
	} {
		if code, body := get(t, h, path); code != want {
			t.Errorf("%s: %d %q, want %d", path, code, body, want)
		}
	}
	if len(seen) != 2 {
		t.Errorf("probed %v: want only the two allowed", seen)
	}
	// The bucket held 6: the two probes and the four refusals spent it.
	if c, body := get(t, h, "/probe?target=127.0.0.1:1/"); c != 429 || !strings.Contains(body, "--probe-rate 6/s") {
		t.Errorf("past --probe-rate 6: %d %q", c, body)
	}
	if c, _ := get(t, h, "/probe?target=x&module=nope"); c != 429 {
		t.Errorf("a refusal past --probe-rate: %d, want 429 (refusals count too)", c)
	}
	now = now.Add(time.Second)
	if c, _ := get(t, h, "/probe?target=127.0.0.1:1/"); c != 200 {
		t.Errorf("a second later: %d", c)
	}
}

func TestAllow(t *testing.T) {
	a, err := ParseAllow([]string{"*.example.com", "127.0.0.0/8", "db.internal:5432", "[::1]:8080", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{
		"http://api.example.com/": true, "https://API.Example.com.:8443/": true, "http://example.com/": false,
		"http://127.1.2.3:9/": true, "http://localhost/": false, "tcp://db.internal:5432": true,
		"tcp://db.internal:5433": false, "http://[::1]:8080/": true, "http://[::1]:8081/": false,
		"http://evil.com/?x=.example.com": false, "http://[fd00::5]/": true, "http://[fe00::5]/": false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Permits(u); got != want {
			t.Errorf("%s: %v, want %v", raw, got, want)
		}
	}
	for _, bad := range []string{"", "a:b:c", "[x", "10.0.0.0/99", "a/b"} {
		if _, err := ParseAllow([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	d := AllowURLs([]*url.URL{{Scheme: "https", Host: "app.test"}})
	if !d.Permits(&url.URL{Scheme: "https", Host: "app.test:443"}) || d.Permits(&url.URL{Scheme: "http", Host: "app.test"}) {
		t.Error("the default allows the targets' host and port exactly")
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{"9115": "127.0.0.1:9115", ":9115": "127.0.0.1:9115",
		"0.0.0.0:9115": "0.0.0.0:9115", "[::]:9115": "[::]:9115", "127.0.0.1:0": "127.0.0.1:0"} {
		if got := ListenAddr(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestStatusPaged: ?limit=N&after=NAME pages /status.json in the targets'
// order, each page saying the total and the next page's after=; the pages
// together are the whole document's targets; without parameters the
// document is the whole one, without total or next.
func TestStatusPaged(t *testing.T) {
	svc := New(Config{Interval: time.Minute, Now: func() time.Time { return t0.Add(time.Hour) }})
	publish(t, svc, sweepInput(1, policy.Stay))
	h := svc.Handler()
	_, whole := get(t, h, "/status.json")
	all := readStatus(t, whole)
	if strings.Contains(whole, `"total"`) || strings.Contains(whole, `"next"`) || len(all.lines) != 3 {
		t.Fatalf("the whole document changed shape: %s", whole)
	}
	var names []string
	path := "/status.json?limit=2"
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("pages never end")
		}
		code, body := get(t, h, path)
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		p := readStatus(t, body)
		if p.Total == nil || *p.Total != 3 || len(p.lines) > 2 || p.Sweep == nil || p.Sweep.N != 1 {
			t.Fatalf("%s: total %v, %d targets, sweep %v", path, p.Total, len(p.lines), p.Sweep)
		}
		for _, tg := range p.lines {
			names = append(names, tg.Target)
		}
		if p.Next == "" {
			break
		}
		path = "/status.json?limit=2&after=" + url.QueryEscape(p.Next)
	}
	want := []string{all.lines[0].Target, all.lines[1].Target, all.lines[2].Target}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Errorf("pages gave %q, want %q", names, want)
	}
	for _, bad := range []string{"?limit=0", "?limit=x", "?limit=10001", "?limit=2&after=nobody"} {
		if code, body := get(t, h, "/status.json"+bad); code != 400 {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
	if code, body := get(t, h, "/status.json?after="+url.QueryEscape(all.lines[2].Target)); code != 200 || !strings.Contains(body, `"targets": []`) {
		t.Errorf("after the last: %d %s", code, body)
	}
}
