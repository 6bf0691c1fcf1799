// Package listentest makes synthetic fleets for the listener's page: its
// tests render them, and scripts/pageshots screenshots them.
package listentest

import (
	"fmt"
	"strconv"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/metrics"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
	"github.com/healthctl/healthctl/internal/words"
)

// Kind is what a synthetic target is doing.
type Kind int

// The kinds, in the order of a fleet's first 20 targets (then each 100
// targets hold one of each failing kind and 93 passing ones).
const (
	Pass Kind = iota
	// HeldRefused and Held503 are two groups the fleet rule holds, each
	// with its own why.
	HeldRefused
	Held503
	// SlowIgnored is a timeout decided ignore-timeout.
	SlowIgnored
	// TLSPending is an expired certificate, pending-tls.
	TLSPending
	// NoRecoverGrace is a recover: false target whose redeploy decision
	// 38 s ago restarted its grace window: ignore-grace, streak 0.
	NoRecoverGrace
	// Redeployed is a refused target decided redeploy this sweep.
	Redeployed
	kinds
)

// KindOf is the i-th target's kind.
func KindOf(i int) Kind {
	m := i % 100
	if i < 20 {
		m = i % 20
	}
	if m >= 1 && m < int(kinds) {
		return Kind(m)
	}
	return Pass
}

// GroupWhy is the fleet rule's why for a held group of size held in a
// fleet of n, as policy says it: the refused group and the 503 group
// differ.
func GroupWhy(k Kind, held, n int) string {
	head := fmt.Sprintf("%d of %s failed decisively at once (hold at 0.5%%, at least 3 probed)", held, words.Plural(n, "target"))
	tail := "not " + words.Plural(held, "outage") + "; no redeploys"
	if k == Held503 {
		return head + ", all answering HTTP (" + strconv.Itoa(held) + " HTTP 503): the prober reaches them, so a cause they share (a dependency, a release), " + tail
	}
	return head + ", none with an HTTP answer (" + strconv.Itoa(held) + " conn_refused): this looks like the prober's network, " + tail
}

// Fleet is sweep `sweep` (from 1) over n targets at `at` (sweeps one
// minute apart). Publish sweeps 1 to N in order to fill the timelines.
func Fleet(n int, sweep int64, at time.Time) metrics.Input {
	items := make([]watch.Item, n)
	st := state.New()
	st.Sweeps = sweep
	s := &watch.Sweep{N: sweep, Started: at, Duration: 2 * time.Second, Targets: n, Probed: n}
	held := map[Kind]int{}
	for i := range n {
		held[KindOf(i)]++
	}
	whys := map[Kind]string{HeldRefused: GroupWhy(HeldRefused, held[HeldRefused], n), Held503: GroupWhy(Held503, held[Held503], n)}
	group := map[Kind]int32{}
	for _, k := range []Kind{HeldRefused, Held503} {
		if held[k] > 0 {
			s.HeldGroups = append(s.HeldGroups, policy.FleetGroup{Targets: held[k], Held: held[k], Why: whys[k]})
			group[k] = int32(len(s.HeldGroups))
			s.HeldFleet += held[k]
		}
	}
	for i := range n {
		k := KindOf(i)
		name := fmt.Sprintf("svc-%05d", i)
		ep := &watch.Endpoint{Name: name, URL: "http://10-0-" + strconv.Itoa(i/250) + "-" + strconv.Itoa(i%250) + ".app.invalid:8080/healthz", Recover: k != NoRecoverGrace}
		r := probe.Result{Outcome: classify.Pass, Reason: classify.OK, HTTPStatus: 200, Started: at}
		d := policy.Decision{Action: policy.Stay, Why: "pass (HTTP 200): stay"}
		var e state.Entry
		switch k {
		case HeldRefused, Held503, Redeployed:
			r = probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused, Error: "dial tcp 10.0.0.1:8080: connect: connection refused", Started: at}
			if k == Held503 {
				r = probe.Result{Outcome: classify.Unreachable, Reason: classify.HTTPStatus, HTTPStatus: 503, Started: at}
			}
			red := fmt.Sprintf("%s, %d of 3 decisive failures in a row, past the 1m grace window (age 3h): redeploy", r.Reason, sweep)
			d = policy.Decision{Action: policy.Redeploy, Why: red}
			e.Streak = int(sweep)
			if k != Redeployed {
				d.Action = policy.HoldFleet
				d.Why = policy.HeldWhy(policy.HoldFleet, red, whys[k])
			} else {
				e.Redeploys, e.LastRedeploy = 1, at
			}
		case SlowIgnored:
			r = probe.Result{Outcome: classify.Timeout, Reason: classify.HeadersTimeout, Error: "no response within 2s", Started: at}
			d = policy.Decision{Action: policy.IgnoreTimeout, Why: fmt.Sprintf("timeout (headers_timeout), the %d in a row: a slow host is not a dead one, ignore it", sweep)}
		case TLSPending:
			r = probe.Result{Outcome: classify.TLS, Reason: classify.TLSExpired, Error: "x509: certificate has expired", Started: at}
			d = policy.Decision{Action: policy.PendingTLS, Why: "tls (tls_expired): the certificate expired; a redeploy cannot fix that, stay running (pending TLS)"}
		case NoRecoverGrace:
			r = probe.Result{Outcome: classify.Refused, Reason: classify.ConnRefused, Error: "connect: connection refused", Started: at}
			d = policy.Decision{Action: policy.IgnoreGrace, Why: "refused (conn_refused), but the target is 38s old, inside the 1m grace window: still booting, ignore it"}
			e.Redeploys, e.LastRedeploy = 1, at.Add(-38*time.Second)
			// The decision restarted the grace window (policy.Decide).
			e.StartedAt = e.LastRedeploy
		}
		if k != Pass {
			s.Fail++
		} else {
			s.Pass++
		}
		items[i] = watch.Item{Endpoint: ep, Result: r, Decision: d}
		if d.Action == policy.HoldFleet {
			items[i].HeldGroup = group[k]
		}
		st.Targets[name] = e
	}
	return metrics.Input{Latest: items, State: st, Sweep: s}
}
