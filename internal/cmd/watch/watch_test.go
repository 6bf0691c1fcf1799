package watchcmd

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/watch"
)

// parse runs watch's flag parsing up to runF and returns the options.
func parse(t testing.TB, args ...string) *Options {
	return clitest.ParseOptions(t, NewCmd, args...)
}

func TestWatchFlags(t *testing.T) {
	o := parse(t, "--once", "--interval", "30", "--state", "s.json", "--prom-file", "m.prom", "--shard", "1/3",
		"--concurrency", "4", "--hold-fraction", "0.25", "--failure-threshold", "2", "--targets", "t.yaml", "http://a/health")
	switch {
	case !o.Once, o.Interval != 30*time.Second, o.StatePath != "s.json", o.PromFile != "m.prom",
		o.Shard != "1/3", o.Concurrency != 4, o.Fleet.HoldFraction != 0.25, o.TargetsFile != "t.yaml",
		strings.Join(o.URLs, " ") != "http://a/health":
		t.Fatalf("options %+v", o)
	}
	if s, err := o.Policy.Settings(); err != nil || s.FailureThreshold != 2 {
		t.Errorf("policy %+v %v", s, err)
	}
}

// jsonLines decodes stdout's JSON lines: the targets', then the sweep's.
func jsonLines(t *testing.T, out string) (targets []map[string]any, sweep map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%v: %q", err, sc.Text())
		}
		if s, ok := m["sweep"].(map[string]any); ok {
			sweep = s
		} else {
			targets = append(targets, m)
		}
	}
	return targets, sweep
}

// TestWatchRunThroughTheFactory: the sweep probes with the factory's
// prober and clock, and --exit-1 is one decision for the JSON and the
// process.
func TestWatchRunThroughTheFactory(t *testing.T) {
	for _, exit1 := range []bool{false, true} {
		fk := clitest.New(nil, classify.Refused)
		fk.F.Format, fk.F.Exit1 = render.JSON, exit1
		err := Run(context.Background(), fk.F, parse(t, "--once", "--failure-threshold", "1", "http://127.0.0.1:1/health"))
		if got := fk.Probed(); len(got) != 1 {
			t.Fatalf("the factory's prober saw %q", got)
		}
		targets, sweep := jsonLines(t, fk.Out.String())
		wantTarget, wantSweep := exitcode.Refused, exitcode.Redeploy
		if exit1 {
			wantTarget, wantSweep = exitcode.Unreachable, exitcode.Unreachable
		}
		if len(targets) != 1 || targets[0]["exit_code"] != float64(wantTarget) || sweep["exit_code"] != float64(wantSweep) || clitest.Code(err) != wantSweep {
			t.Errorf("--exit-1 %v: exit %d, stdout %s", exit1, clitest.Code(err), fk.Out.String())
		}
		if sweep["started"] != clitest.Now.Format(time.RFC3339) {
			t.Errorf("the sweep did not use the factory's clock: started %v", sweep["started"])
		}
	}
}

func TestWatchRunBadValueNamesItsFlag(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	err := Run(context.Background(), fk.F, parse(t, "--shard", "3/3", "http://127.0.0.1:1/"))
	if clitest.Code(err) != exitcode.Usage || !strings.HasPrefix(err.Error(), `--shard "3/3": `) {
		t.Fatalf("got %v (exit %d)", err, clitest.Code(err))
	}
}

// TestWatchRunWriteFailures: stdout that cannot be written, or a state file
// whose directory is gone by the time the sweep is saved, is exit 74.
func TestWatchRunWriteFailures(t *testing.T) {
	t.Run("stdout", func(t *testing.T) {
		fk := clitest.New(nil, classify.Pass)
		fk.F.Format = render.JSON
		fk.F.Streams.Out = clitest.FailingWriter{Err: syscall.ENOSPC}
		err := Run(context.Background(), fk.F, parse(t, "--once", "http://127.0.0.1:1/"))
		if !output.IsWriteFailure(err) {
			t.Fatalf("got %v, want a write failure", err)
		}
	})
	t.Run("state", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		fk := clitest.New(nil, classify.Pass)
		fk.F.Prober = func(_ context.Context, o *scheme.Options) probe.Result {
			// The state file is open and locked: its directory goes
			// away during the sweep, so saving it fails.
			os.RemoveAll(dir)
			return clitest.Result(o.URL, classify.Pass)
		}
		err := Run(context.Background(), fk.F, parse(t, "--once", "--state", filepath.Join(dir, "s.json"), "http://127.0.0.1:1/"))
		if !output.IsWriteFailure(err) || clitest.Code(err) != -1 {
			t.Fatalf("got %v, want a write failure without a usage code", err)
		}
	})
}

// TestOnceMemoryLimitBeforeTheTargetsFile: under --once the soft memory
// limit is set before the targets file is read (from a count of its names:
// reading it is the run's first peak) and again for the targets kept.
func TestOnceMemoryLimitBeforeTheTargetsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "targets.yaml")
	var b strings.Builder
	b.WriteString("targets:\n")
	for i := range 10030 {
		b.WriteString("  - name: t" + strconv.Itoa(i) + "\n    url: http://127.0.0.1:1/\n")
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fk := clitest.New(nil, classify.Pass)
	var limits []int64
	fk.F.SetMemoryLimit = func(n int64) int64 { limits = append(limits, n); return 0 }
	Run(context.Background(), fk.F, parse(t, "--once", "--shard", "0/2", "--targets", file))
	probed := int64(len(fk.Probed()))
	if len(limits) != 2 || limits[0] != watch.MemoryLimit(10030, 0) || limits[1] != watch.MemoryLimit(int(probed), 0) {
		t.Fatalf("limits %v, want %d then %d", limits, watch.MemoryLimit(10030, 0), watch.MemoryLimit(int(probed), 0))
	}
}

// TestWatchLinesInFileOrder: a sweep of more targets than one block of
// lines (they are built and encoded on every core, some with options of
// their own) prints each target's line once, in the file's order, then the
// sweep's; with -q only the transitions, still in order.
func TestWatchLinesInFileOrder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "targets.yaml")
	var b strings.Builder
	b.WriteString("targets:\n")
	const n = 1500
	for i := range n {
		b.WriteString("  - name: t" + strconv.Itoa(i) + "\n    url: http://127.0.0.1:1/" + strconv.Itoa(i) + "\n")
		if i%5 == 0 {
			// Options of its own: its template is built for it alone
			// (on whichever core builds its block).
			b.WriteString("    expect_status: 200-299\n")
		}
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, quiet := range []bool{false, true} {
		fk := clitest.New(nil, classify.Pass)
		fk.F.Global.Output, fk.F.Global.Quiet = "json", quiet
		fk.F.Prober = func(_ context.Context, o *scheme.Options) probe.Result {
			i, _ := strconv.Atoi(strings.TrimPrefix(o.URL.Path, "/"))
			if i%3 == 0 {
				return clitest.Result(o.URL, classify.Refused)
			}
			return clitest.Result(o.URL, classify.Pass)
		}
		err := Run(context.Background(), fk.F, parse(t, "--once", "--concurrency", "64", "--targets", file))
		if code := clitest.Code(err); code != exitcode.Pass && code != exitcode.Redeploy {
			t.Fatalf("quiet %v: exit %d: %v", quiet, code, err)
		}
		targets, sweep := jsonLines(t, fk.Out.String())
		want := 0
		for _, l := range targets {
			if quiet {
				for want < n && want%3 != 0 {
					want++ // a pass is no transition: not printed with -q
				}
			}
			if l["target"] != "t"+strconv.Itoa(want) {
				t.Fatalf("quiet %v: line for %v where t%d was due", quiet, l["target"], want)
			}
			want++
		}
		if !quiet && (len(targets) != n || sweep["targets"] != float64(n)) {
			t.Errorf("%d target lines, sweep %v; want %d and the sweep line", len(targets), sweep, n)
		}
		if quiet && len(targets) != n/3 {
			t.Errorf("-q: %d target lines, want the %d transitions", len(targets), n/3)
		}
	}
}

// TestWatchTargetsFirstErrorInFileOrder: the entries are built on every
// core, but the error is the first bad entry's in the file, as if built one
// by one; a URL argument and a file entry of one name are named both.
func TestWatchTargetsFirstErrorInFileOrder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.yaml")
	var b strings.Builder
	b.WriteString("targets:\n")
	line := 2
	badLine := 0
	for i := range 600 {
		u := "http://127.0.0.1:1/"
		if i == 520 {
			u = "ftp://127.0.0.1:1/"
		}
		b.WriteString("  - name: t" + strconv.Itoa(i) + "\n    url: " + u + "\n")
		line += 2
		switch i {
		case 450:
			b.WriteString("    expect_status: nope\n")
			line++
		case 130:
			b.WriteString("    connect_timeout: -1s\n")
			badLine = line
			line++
		}
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fk := clitest.New(nil, classify.Pass)
	err := Run(context.Background(), fk.F, parse(t, "--once", "--targets", file))
	want := file + ":" + strconv.Itoa(badLine) + `: target "t130": connect_timeout`
	if clitest.Code(err) != exitcode.Usage || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v (exit %d), want it to start %q", err, clitest.Code(err), want)
	}
	if len(fk.Probed()) != 0 {
		t.Errorf("probed %d targets of a file with errors", len(fk.Probed()))
	}

	dup := filepath.Join(dir, "dup.yaml")
	if err := os.WriteFile(dup, []byte("targets:\n  - name: http://127.0.0.1:1/\n    url: http://127.0.0.1:1/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), fk.F, parse(t, "--once", "--targets", dup, "http://127.0.0.1:1/"))
	if want := dup + `:2: target "http://127.0.0.1:1/" given twice (first: URL argument)`; clitest.Code(err) != exitcode.Usage || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// TestTargetsDifferingInCredentials: two URL arguments that differ only in
// their password are two targets (the second's name numbered), not one
// given twice; the same URL twice still is.
func TestTargetsDifferingInCredentials(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	ts, err := watchTargets(fk.F, parse(t, "--once", "redis://:pw1111@127.0.0.1:1", "redis://:pw2222@127.0.0.1:1", "redis://alice:pw1111@127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ts {
		names = append(names, e.Name)
	}
	if want := "redis://***@127.0.0.1:1|redis://***@127.0.0.1:1 (2)|redis://alice:***@127.0.0.1:1"; strings.Join(names, "|") != want {
		t.Errorf("names %q, want %s", names, want)
	}
	_, err = watchTargets(fk.F, parse(t, "--once", "redis://:pw1111@127.0.0.1:1", "redis://:pw1111@127.0.0.1:1"))
	if clitest.Code(err) != exitcode.Usage || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("the same URL twice: %v", err)
	}
}
