package watchcmd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	statestore "github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
)

// TestLatestItems: a long-running watch's latest items (what /metrics,
// /status.json and the page are made from) are a sweep's own when it
// probed every target, and a skipped or interrupted target keeps its last
// probed item afterwards — in that sweep's items too, updated in place —
// and a target added by a reload starts unprobed.
func TestLatestItems(t *testing.T) {
	a, b, c := &watch.Endpoint{Name: "a"}, &watch.Endpoint{Name: "b"}, &watch.Endpoint{Name: "c"}
	w := watch.New(watch.Config{Targets: []*watch.Endpoint{a, b}}, statestore.New())
	fk := clitest.New(nil, classify.Pass)
	r := &watchReporter{f: fk.F, opts: &Options{}, w: w, latestOn: true}
	item := func(e *watch.Endpoint, o classify.Outcome) watch.Item {
		return watch.Item{Endpoint: e, Result: probe.Result{Outcome: o}}
	}
	outcomes := func() (got []string) {
		for _, it := range r.latest {
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

	s1 := &watch.Sweep{N: 1, Items: []watch.Item{item(a, classify.Pass), item(b, classify.Refused)}}
	r.report(s1)
	want("a whole sweep", "a:pass", "b:refused")
	if &r.latest[0] != &s1.Items[0] {
		t.Fatal("a whole sweep's items were copied, not kept")
	}

	s2 := &watch.Sweep{N: 2, Items: []watch.Item{item(a, classify.Timeout), {Endpoint: b, Skipped: true}}}
	r.report(s2)
	want("b skipped", "a:timeout", "b:refused")

	s3 := &watch.Sweep{N: 3, Items: []watch.Item{{Endpoint: a, Interrupted: true}, item(b, classify.Pass)}}
	r.report(s3)
	want("a interrupted", "a:timeout", "b:pass")

	w.SetTargets([]*watch.Endpoint{c, a})
	s4 := &watch.Sweep{N: 4, Items: []watch.Item{{Endpoint: c, Skipped: true}, {Endpoint: a, Skipped: true}}}
	r.report(s4)
	want("reloaded, nothing probed", "c:", "a:timeout")

	s5 := &watch.Sweep{N: 5, Items: []watch.Item{item(c, classify.DNS), item(a, classify.Pass)}}
	r.report(s5)
	want("reloaded, a whole sweep", "c:dns", "a:pass")
	if r.latestAt["a"] != 1 || r.latestAt["c"] != 0 || len(r.latestAt) != 2 {
		t.Fatalf("latestAt %v", r.latestAt)
	}
}

// TestLongRunningMemoryLimit: a long-running watch sets its own soft
// memory limit (twice one sweep's) for the targets it keeps; GOMEMLIMIT
// wins.
func TestLongRunningMemoryLimit(t *testing.T) {
	for _, env := range []string{"", "1GiB"} {
		fk := clitest.New(map[string]string{"GOMEMLIMIT": env}, classify.Pass)
		ctx, cancel := context.WithCancel(context.Background())
		fk.F.Prober = func(_ context.Context, o *scheme.Options) probe.Result {
			cancel() // one sweep
			return clitest.Result(o.URL, classify.Pass)
		}
		var limits []int64
		fk.F.SetMemoryLimit = func(n int64) int64 { limits = append(limits, n); return 0 }
		Run(ctx, fk.F, parse(t, "--interval", "1h", "http://127.0.0.1:1/", "http://127.0.0.1:2/"))
		want := []int64{watch.LongRunningMemoryLimit(2, 0)}
		if env != "" {
			want = nil
		}
		if !slices.Equal(limits, want) {
			t.Errorf("GOMEMLIMIT=%q: limits %v, want %v", env, limits, want)
		}
	}
}

// TestLongRunningMemoryLimitOnReload: a SIGHUP's reload sets the
// long-running limit again for the targets it keeps.
func TestLongRunningMemoryLimitOnReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "targets.yaml")
	write := func(n int) {
		var b strings.Builder
		b.WriteString("targets:\n")
		for i := range n {
			b.WriteString("  - name: t" + strconv.Itoa(i) + "\n    url: http://127.0.0.1:1/\n")
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(2)
	fk := clitest.New(nil, classify.Pass)
	var counts []int
	w := watch.New(watch.Config{}, statestore.New())
	r := &watchReporter{f: fk.F, opts: parse(t, "--targets", file), w: w, memLimit: func(n, _ int) { counts = append(counts, n) }}
	r.reloadTargets()
	write(5)
	r.reloadTargets()
	if !slices.Equal(counts, []int{2, 5}) {
		t.Fatalf("limits set for %v targets, want [2 5]", counts)
	}
}
