package metrics

import (
	"bytes"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
)

// hostileNames are target names that a careless encoder would break.
var hostileNames = []string{"api", "quo\"te", `back\slash`, "new\nline", "ünïcödé", "bad\xffutf8", "{braces} = 1"}

func metricsSample(t *testing.T) []byte {
	t.Helper()
	exp := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	st := state.New()
	st.Sweeps = 7
	var items []watch.Item
	for i, name := range hostileNames {
		tg := &watch.Endpoint{Name: name, Options: &scheme.Options{URL: &url.URL{Scheme: "http", Host: "x"}}}
		it := watch.Item{Endpoint: tg, Decision: policy.Decision{Action: policy.IgnoreBlip}}
		if i%2 == 0 {
			it.Result = probe.Result{Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200,
				Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseDNS: time.Millisecond, probe.PhaseConnect: 2 * time.Millisecond, probe.PhaseTLS: 3 * time.Millisecond,
					probe.PhaseTTFB: 4 * time.Millisecond, probe.PhaseTransfer: time.Microsecond, probe.PhaseTotal: 11 * time.Millisecond}),
				TLS: &probe.TLSInfo{Chain: []probe.CertInfo{{NotAfter: exp.Add(time.Hour)}, {NotAfter: exp}}}}
			it.Decision.Action = policy.Stay
		} else if i != 5 {
			it.Result = probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused, Error: "secret \"error\" text",
				Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseTotal: time.Millisecond})}
		}
		items = append(items, it)
		st.Targets[name] = state.Entry{History: policy.History{Streak: i}, Redeploys: int64(i), Skipped: 1}
	}
	var buf bytes.Buffer
	err := Write(&buf, Input{Latest: items, State: st,
		Sweep: &watch.Sweep{N: 3, Started: exp, Duration: 1500 * time.Millisecond, Targets: len(items)}})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestMetricsParse(t *testing.T) {
	out := metricsSample(t)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("expfmt rejects the output: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "secret") {
		t.Fatal("error text leaked into the metrics")
	}
	names := map[string]bool{}
	for _, m := range fams["probe_success"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "target" {
				names[l.GetValue()] = true
			}
		}
	}
	for i, n := range hostileNames {
		if i == 5 {
			continue // never probed: no probe_* sample
		}
		n = strings.ToValidUTF8(n, "\uFFFD")
		if !names[n] {
			t.Errorf("target %q did not survive the round trip (got %v)", n, names)
		}
	}
	if got := len(fams["healthctl_streak"].GetMetric()); got != len(hostileNames) {
		t.Errorf("healthctl_streak has %d samples, want %d", got, len(hostileNames))
	}
	if v := fams["probe_ssl_earliest_cert_expiry"].GetMetric()[0].GetGauge().GetValue(); v != float64(time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC).Unix()) {
		t.Errorf("earliest expiry %v", v)
	}
	phases := 0
	for _, m := range fams["probe_http_duration_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "phase" && l.GetValue() == "processing" {
				phases++
			}
		}
	}
	if phases == 0 {
		t.Error("no processing phase sample")
	}
	for _, want := range []string{"healthctl_decision", "healthctl_redeploys_total", "healthctl_skipped_probes_total",
		"healthctl_sweep_duration_seconds", "probe_duration_seconds", "probe_http_status_code", "healthctl_probe_result"} {
		if len(fams[want].GetMetric()) == 0 {
			t.Errorf("no %s", want)
		}
	}
	if fams["healthctl_redeploys_total"].GetType().String() != "COUNTER" {
		t.Error("healthctl_redeploys_total is not a counter")
	}
}

// TestMetricsPromtool runs `promtool check metrics` when promtool is
// installed (Debian: apt-get install prometheus); it skips otherwise.
func TestMetricsPromtool(t *testing.T) {
	pt, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed")
	}
	f := filepath.Join(t.TempDir(), "m.prom")
	if err := os.WriteFile(f, metricsSample(t), 0o644); err != nil {
		t.Fatal(err)
	}
	in, _ := os.Open(f)
	defer in.Close()
	cmd := exec.Command(pt, "check", "metrics")
	cmd.Stdin = in
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestEscapeLabel(t *testing.T) {
	if got := EscapeLabel("a\"b\\c\nd"); got != `a\"b\\c\nd` {
		t.Fatalf("EscapeLabel = %s", got)
	}
}

// TestEscapeLabelControls: a label value never carries a raw control,
// C1, bidi or BOM character; the text format's parser still reads it.
func TestEscapeLabelControls(t *testing.T) {
	for in, want := range map[string]string{
		"esc\x1b[2J bel\x07":    `esc\\x1b[2J bel\\x07`,
		"csi\u009b2J osc\u009d": `csi\\u009b2J osc\\u009d`,
		"bidi\u202eevil\u2066":  `bidi\\u202eevil\\u2066`,
		"bom\ufeff alm\u061c":   `bom\\ufeff alm\\u061c`,
		"del\x7f cr\r":          `del\\x7f cr\\r`,
		"two\nlines\x1b":        `two\nlines\\x1b`,
		"ünïcödé":               "ünïcödé",
	} {
		got := EscapeLabel(in)
		if got != want {
			t.Errorf("EscapeLabel(%q) = %q, want %q", in, got, want)
		}
		line := "m{target=\"" + got + "\"} 1\n"
		for _, r := range line[:len(line)-1] {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0xfeff || r == 0x061c {
				t.Errorf("EscapeLabel(%q): raw %U", in, r)
			}
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := p.TextToMetricFamilies(strings.NewReader("# TYPE m gauge\n" + line)); err != nil {
			t.Errorf("EscapeLabel(%q): parser: %v", in, err)
		}
	}
}

// TestEscapeLabelShortcut: a value plainLabel passes through as it is is
// one the full escaping leaves as it is; every byte on its own, and a few
// strings around the edges.
func TestEscapeLabelShortcut(t *testing.T) {
	cases := []string{"", "env-1", "a b", "~", " ", "ok\x7f", `a\b`, `"`, "ü", "\u202e"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	plain := 0
	for _, s := range cases {
		if plainLabel(s) {
			plain++
			if got := escapeLabel(s); got != s {
				t.Errorf("%q: passed through, but escaping gives %q", s, got)
			}
		} else if EscapeLabel(s) != escapeLabel(s) {
			t.Errorf("%q: EscapeLabel and escapeLabel differ", s)
		}
	}
	if plain < 2*(0x7f-0x20-2) {
		t.Errorf("only %d of %d values passed through: the shortcut is not taken", plain, len(cases))
	}
}
