package watch

import (
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/state"
)

// TestLatestItems: a long-running watch's latest items (what /metrics,
// /status.json and the page are made from) are a sweep's own when it
// probed every target, and a skipped or interrupted target keeps its last
// probed item afterwards — in that sweep's items too, updated in place —
// and a target added by a reload starts unprobed.
func TestLatestItems(t *testing.T) {
	a, b, c := &Endpoint{Name: "a"}, &Endpoint{Name: "b"}, &Endpoint{Name: "c"}
	w := New(Config{Targets: []*Endpoint{a, b}}, state.New())
	var r Latest
	var latest []Item
	report := func(s *Sweep) { latest = r.Update(s, w.Targets()) }
	item := func(e *Endpoint, o classify.Outcome) Item {
		return Item{Endpoint: e, Result: probe.Result{Outcome: o}}
	}
	outcomes := func() (got []string) {
		for _, it := range latest {
			got = append(got, it.Endpoint.Name+":"+string(it.Result.Outcome))
		}
		return got
	}
	want := func(step string, w ...string) {
		t.Helper()
		got := outcomes()
		if len(got) != len(w) {
			t.Fatalf("%s: latest %v, want %v", step, got, w)
		}
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("%s: latest %v, want %v", step, got, w)
			}
		}
	}

	s1 := &Sweep{N: 1, Items: []Item{item(a, classify.Pass), item(b, classify.Refused)}}
	report(s1)
	want("a whole sweep", "a:pass", "b:refused")
	if &latest[0] != &s1.Items[0] {
		t.Fatal("a whole sweep's items were copied, not kept")
	}

	s2 := &Sweep{N: 2, Items: []Item{item(a, classify.Timeout), {Endpoint: b, Skipped: true}}}
	report(s2)
	want("b skipped", "a:timeout", "b:refused")

	s3 := &Sweep{N: 3, Items: []Item{{Endpoint: a, Interrupted: true}, item(b, classify.Pass)}}
	report(s3)
	want("a interrupted", "a:timeout", "b:pass")

	w.SetTargets([]*Endpoint{c, a})
	s4 := &Sweep{N: 4, Items: []Item{{Endpoint: c, Skipped: true}, {Endpoint: a, Skipped: true}}}
	report(s4)
	want("reloaded, nothing probed", "c:", "a:timeout")

	s5 := &Sweep{N: 5, Items: []Item{item(c, classify.DNS), item(a, classify.Pass)}}
	report(s5)
	want("reloaded, a whole sweep", "c:dns", "a:pass")
	if r.latestAt["a"] != 1 || r.latestAt["c"] != 0 || len(r.latestAt) != 2 {
		t.Fatalf("latestAt %v", r.latestAt)
	}
}
