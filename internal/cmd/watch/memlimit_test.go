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

// TestOnceCollectorPacedByTheLimit: under --once the collector is turned
// off (GOGC) only after the soft limit is in place, so the limit paces it;
// a GOGC or GOMEMLIMIT of the user's, or a long-running watch, leaves it
// as it is.
func TestOnceCollectorPacedByTheLimit(t *testing.T) {
	file := filepath.Join(t.TempDir(), "targets.yaml")
	if err := os.WriteFile(file, []byte("targets:\n  - name: a\n    url: http://127.0.0.1:1/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"once, a targets file", nil, []string{"--once", "--targets", file}, []string{"limit", "gogc -1", "limit"}},
		{"once, URLs", nil, []string{"--once", "http://127.0.0.1:1/"}, []string{"limit", "gogc -1"}},
		{"GOGC set", map[string]string{"GOGC": "200"}, []string{"--once", "--targets", file}, []string{"limit", "limit"}},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, []string{"--once", "--targets", file}, nil},
	} {
		fk := clitest.New(c.env, classify.Pass)
		var calls []string
		fk.F.SetMemoryLimit = func(int64) int64 { calls = append(calls, "limit"); return 0 }
		fk.F.SetGCPercent = func(p int) int { calls = append(calls, "gogc "+strconv.Itoa(p)); return 100 }
		Run(context.Background(), fk.F, parse(t, c.args...))
		if !slices.Equal(calls, c.want) {
			t.Errorf("%s: calls %v, want %v", c.name, calls, c.want)
		}
	}
	// A long-running watch: its own limit, the collector as GOGC says.
	fk := clitest.New(nil, classify.Pass)
	ctx, cancel := context.WithCancel(context.Background())
	fk.F.Prober = func(_ context.Context, o *scheme.Options) probe.Result {
		cancel() // one sweep
		return clitest.Result(o.URL, classify.Pass)
	}
	var gogc []int
	fk.F.SetMemoryLimit = func(int64) int64 { return 0 }
	fk.F.SetGCPercent = func(p int) int { gogc = append(gogc, p); return 100 }
	Run(ctx, fk.F, parse(t, "--interval", "1h", "http://127.0.0.1:1/"))
	if len(gogc) != 0 {
		t.Errorf("long-running watch: GOGC set to %v", gogc)
	}
}
