package watchcmd

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/report"
	"github.com/healthctl/healthctl/internal/watch"
)

// TestAppendFieldsAsEncodingJSON: a line the fast encoder writes
// (watchJSON.AppendJSONLine, report.ResultJSON.AppendFields) is byte for
// byte the line encoding/json writes through output.JSONLine, over random
// results of every shape, hostile strings and awkward floats included; and
// a line it declines is one it could not write that way.
func TestAppendFieldsAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 1))
	strs := []string{"", "ok", "env-1", "http://127.0.0.1:8080/health?x=1&y=<2>", "a b", `say "hi"`, `back\slash`,
		"tab\there", "nl\nx", "\x00", "\x7f", "é", "\u2028", "\xff", "<>&", "pass (ok): the target answers, stay running",
		"~!@#$%^*()_+{}|:?`-=[];',./"}
	floats := []float64{0, math.Copysign(0, -1), 1, 1.514, 0.006, 1e-6, 9e-7, 1e-7, 123456.789, 1e20, 1e21, 2.5e21, -3.25,
		math.NaN(), math.Inf(1), 0.1 + 0.2}
	phases := []string{"dns", "connect", "tls", "ttfb", "transfer", "total", "proxy", "é", `q"`, "aaa", "tt", "zz_other"}
	plain := []string{"", "ok", "env-1", "pass", "HTTP/1.1", "127.0.0.1:8080", "<>&", "~!@#$%^*()_+{}|:?`-=[];',./"}
	pick := func(s []string) string {
		if r.IntN(30) != 0 {
			return plain[r.IntN(len(plain))]
		}
		return s[r.IntN(len(s))]
	}
	fast, slow := 0, 0
	for i := range 20000 {
		res := probe.Result{
			URL:         pick(strs),
			Outcome:     classify.Outcome(pick(strs)),
			Reason:      classify.Reason(pick(strs)),
			HTTPVersion: pick(strs),
			Error:       pick(strs),
			Address:     pick(strs),
			Timings:     probe.Timings{},
		}
		if r.IntN(2) == 0 {
			res.HTTPStatus = r.IntN(600)
		}
		if r.IntN(2) == 0 {
			res.IPFamily = 4 + 2*r.IntN(2)
		}
		res.BodyTruncated = r.IntN(4) == 0
		res.Downgrade = r.IntN(4) == 0
		j := watchJSON{ResultJSON: report.NewResultJSON(res, nil, r.IntN(10)-1), Streak: r.IntN(5) - 1, Transition: r.IntN(2) == 0}
		j.Target = pick(strs)
		for range r.IntN(7) {
			f := 1.5
			if r.IntN(20) == 0 {
				f = floats[r.IntN(len(floats))]
			} else if r.IntN(2) == 0 {
				f = float64(r.IntN(1e6)) / 1000
			}
			ph := phases[r.IntN(6)]
			if r.IntN(30) == 0 {
				ph = phases[r.IntN(len(phases))]
			}
			j.TimingsMS[ph] = f
		}
		switch r.IntN(12) {
		case 0:
			j.TimingsMS = nil
		case 1:
			j.Hook = &watch.HookResult{OK: true, Status: "exit 0"}
		case 2:
			j.Proxy = "http://127.0.0.1:3128"
		case 3:
			j.DialAttempts = []probe.DialAttempt{{Address: "127.0.0.1:1"}}
		case 4:
			j.TLS = &probe.TLSInfo{}
		case 5:
			s := 1.5
			j.RetryAfterS = &s
		}
		if r.IntN(4) != 0 {
			j.Decision = &policy.Decision{Action: policy.Action(pick(strs)), Why: pick(strs), Cleared: r.IntN(2) == 0}
		}
		var want bytes.Buffer
		werr := output.JSONLine(&want, j)
		got, ok := j.AppendJSONLine(nil)
		if !ok {
			slow++
			continue
		}
		fast++
		if werr != nil {
			t.Fatalf("case %d: encoding/json failed (%v) but the fast encoder wrote %s", i, werr, got)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("case %d:\nfast: %s\njson: %s", i, got, want.Bytes())
		}
	}
	t.Logf("fast %d, slow %d", fast, slow)
	if fast < 500 || slow < 500 {
		t.Fatalf("fast %d, slow %d: both paths must be exercised", fast, slow)
	}
	// The line of every passing target of a sweep takes the fast path.
	res := probe.Result{URL: "http://127.0.0.1:8080/env/1/health", Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200,
		HTTPVersion: "HTTP/1.1", Address: "127.0.0.1:8080", IPFamily: 4,
		Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseConnect: 1514000, probe.PhaseTotal: 1745000})}
	d := policy.Decision{Action: policy.Stay, Why: "pass (ok): the target answers, stay running"}
	it := &watch.Item{Endpoint: &watch.Endpoint{Name: "env-1"}, Result: res, Decision: d}
	if _, ok := newWatchJSON(it, func(c int) int { return c }).AppendJSONLine(nil); !ok {
		t.Fatal("a passing target's line did not take the fast encoder")
	}
}

// TestItemLinesAsEncodingJSON: the lines of a sweep as print writes them
// (JSONLines over itemLines, each encoded through a reused watchJSON of
// lineScratch) are byte for byte encoding/json's of newWatchJSON, item by
// item, over random items whose timings, hooks, addresses and decisions
// differ from one line to the next (what one line leaves in the scratch
// must never reach another).
func TestItemLinesAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 2))
	phases := []probe.Phase{probe.PhaseDNS, probe.PhaseConnect, probe.PhaseTLS, probe.PhaseTTFB, probe.PhaseTransfer,
		probe.PhaseTotal, probe.PhaseProxy, "other", `q"`}
	words := []string{"", "ok", "env-1", "http://127.0.0.1:8080/health", "a\tb", `say "hi"`, "é", "\x1b[31m"}
	items := make([]watch.Item, 3000)
	for i := range items {
		res := probe.Result{URL: words[r.IntN(len(words))], Outcome: classify.Pass, Reason: classify.OK,
			HTTPStatus: r.IntN(600), Error: words[r.IntN(len(words))], Address: "127.0.0.1:8080", IPFamily: 4,
			Timings: probe.Timings{}}
		if r.IntN(3) == 0 {
			res.Outcome, res.Reason = classify.Unreachable, classify.ConnRefused
		}
		for range r.IntN(8) {
			ph := phases[r.IntN(7)]
			if r.IntN(20) == 0 {
				ph = phases[r.IntN(len(phases))]
			}
			res.Timings.Set(ph, time.Duration(r.Int64N(int64(10*time.Second))))
		}
		if r.IntN(10) == 0 {
			res.Timings = probe.Timings{}
		}
		if r.IntN(15) == 0 {
			res.Addresses = []probe.Result{{URL: "http://[::1]:8080/", Outcome: classify.Unreachable, Reason: classify.ConnRefused,
				Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseTotal: time.Millisecond})}}
		}
		it := watch.Item{Endpoint: &watch.Endpoint{Name: words[r.IntN(len(words))], URL: "http://127.0.0.1:8080/x"}, Result: res,
			Decision:   policy.Decision{Action: policy.Stay, Why: words[r.IntN(len(words))], Cleared: r.IntN(2) == 0},
			Transition: r.IntN(2) == 0}
		it.State.Streak = r.IntN(9)
		if r.IntN(12) == 0 {
			it.Hook = &watch.HookResult{OK: r.IntN(2) == 0, Status: "exit 0", Output: "line 1\n\x1b[2Jline 2"}
		}
		items[i] = it
	}
	fold := func(c int) int { return c }
	if r.IntN(2) == 0 {
		fold = func(c int) int { return min(c, 1) }
	}
	var want bytes.Buffer
	for i := range items {
		if err := output.JSONLine(&want, newWatchJSON(&items[i], fold)); err != nil {
			t.Fatal(err)
		}
	}
	lines := make([]itemLine, len(items))
	var got bytes.Buffer
	if err := output.JSONLines(&got, len(items), func(i int) (any, bool) {
		lines[i] = itemLine{it: &items[i], fold: fold}
		return &lines[i], true
	}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		g, w := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want.Bytes(), []byte("\n"))
		for i := range min(len(g), len(w)) {
			if !bytes.Equal(g[i], w[i]) {
				t.Fatalf("line %d:\ngot:  %s\nwant: %s", i, g[i], w[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(g), len(w))
	}
}
