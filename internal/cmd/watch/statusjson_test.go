package watchcmd

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/listen/board"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/scheme"
	statestore "github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/sweepfiles"
	"github.com/healthctl/healthctl/internal/watch"
)

// TestStatusJSONIsTheJSONLines: after one sweep of a long-running watch
// with --listen, each target object of /status.json is the object -o json
// wrote for the same target, field for field (--exit-1's exit_code, the
// fleet rule's why, a masked password, the timings and dial attempts
// included): a consumer parses one shape.
func TestStatusJSONIsTheJSONLines(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	fk.F.Format, fk.F.Exit1 = render.JSON, true
	outcomes := map[string]classify.Outcome{"/a": classify.Pass, "/b": classify.Refused, "/c": classify.Unreachable, "/d": classify.TLS}
	fk.F.Prober = func(_ context.Context, o *scheme.Options) probe.Result {
		r := clitest.Result(o.URL, outcomes[o.URL.Path])
		r.Timings.Set(probe.PhaseConnect, 2*time.Millisecond)
		r.Timings.Set(probe.PhaseTotal, 12500*time.Microsecond)
		r.Address, r.IPFamily = "127.0.0.1:1", 4
		r.DialAttempts = []probe.DialAttempt{{Address: "127.0.0.1:1", Duration: time.Millisecond, Error: r.Error}}
		return r
	}
	opts := parse(t, "--interval", "1h", "--listen", "127.0.0.1:0", "--failure-threshold", "1",
		"http://127.0.0.1:1/a", "http://user:pw@127.0.0.1:1/b", "http://127.0.0.1:1/c", "http://127.0.0.1:1/d")
	targets, _, err := buildTargets(fk.F, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, settings, err := check(opts)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := newService(fk.F, opts, targets, 4)
	if err != nil {
		t.Fatal(err)
	}
	w := watch.New(watch.Config{Targets: targets, Settings: settings, Concurrency: 4, Interval: time.Hour, Probe: fk.F.Probe, Now: fk.F.Clock}, statestore.New())
	r := &watchReporter{f: fk.F, opts: opts, w: w, svc: svc, files: &sweepfiles.Files{Publish: svc.Publish}, latestOn: true}
	if err := r.report(w.Sweep(context.Background())); err != nil {
		t.Fatal(err)
	}
	lines, sweep := jsonLines(t, fk.Out.String())
	if len(lines) != 4 || sweep == nil {
		t.Fatalf("-o json wrote %d target lines:\n%s", len(lines), fk.Out.String())
	}
	rec := httptest.NewRecorder()
	svc.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/status.json", nil))
	var doc board.Document
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("/status.json: %v\n%s", err, rec.Body)
	}
	if len(doc.Targets) != len(lines) || len(doc.Board) != len(lines) {
		t.Fatalf("/status.json has %d targets, %d board entries; -o json %d lines", len(doc.Targets), len(doc.Board), len(lines))
	}
	for i, raw := range doc.Targets {
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, lines[i]) {
			t.Errorf("target %d:\n/status.json %v\n-o json      %v", i, got, lines[i])
		}
		if doc.Board[i].Target != lines[i]["target"] {
			t.Errorf("board entry %d is %q, the line's target %v", i, doc.Board[i].Target, lines[i]["target"])
		}
	}
	if lines[1]["exit_code"] != float64(1) || lines[1]["decision"] == nil || lines[0]["timings_ms"] == nil {
		t.Errorf("the lines do not carry what the test checks: %v", lines[1])
	}
}
