package metrics

import (
	"fmt"
	"io"
	"net/url"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
)

// sweepInput is a --once sweep of n plain-HTTP targets as watch hands it
// to Write: most pass, every 10th is refused, every 50th has a redeploy
// on record; a few names need escaping.
func sweepInput(n int) Input {
	started := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	st := state.New()
	st.Sweeps = 12
	items := make([]watch.Item, n)
	for i := range items {
		name := fmt.Sprintf("env-%d", i)
		if i%97 == 5 {
			name = hostileNames[i%len(hostileNames)] + fmt.Sprint(i)
		}
		tg := &watch.Endpoint{Name: name, Recover: i%3 != 0, Options: &scheme.Options{URL: &url.URL{Scheme: "http", Host: "127.0.0.1:18080"}}}
		it := watch.Item{Endpoint: tg, Decision: policy.Decision{Action: policy.Stay}}
		it.Result = probe.Result{Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200,
			Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseConnect: time.Duration(40+i%13) * time.Microsecond, probe.PhaseTTFB: time.Duration(300+i%101) * time.Microsecond,
				probe.PhaseTransfer: time.Duration(i%7) * time.Microsecond, probe.PhaseTotal: time.Duration(400+i%211) * time.Microsecond})}
		if i%10 == 9 {
			it.Result = probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused, Error: "connect: connection refused",
				Timings: probe.TimingsOf(map[probe.Phase]time.Duration{probe.PhaseConnect: 30 * time.Microsecond, probe.PhaseTotal: 90 * time.Microsecond})}
			it.Decision.Action = policy.IgnoreBlip
		}
		items[i] = it
		e := state.Entry{History: policy.History{Streak: i % 3}, Skipped: int64(i % 2)}
		if i%50 == 7 {
			e.Redeploys, e.LastRedeploy, e.HeldFleet = 2, started.Add(-time.Duration(i)*time.Second), 1
		}
		st.Targets[name] = e
	}
	return Input{Latest: items, State: st, Shard: "2/4",
		Sweep: &watch.Sweep{N: 1, Started: started, Duration: 900 * time.Millisecond, Targets: n}}
}

// BenchmarkWrite10k is the textfile of a 10,000-target sweep (~24 samples
// a target), written to nowhere: what --prom-file costs after the sweep.
func BenchmarkWrite10k(b *testing.B) {
	in := sweepInput(10000)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, in); err != nil {
			b.Fatal(err)
		}
	}
}
