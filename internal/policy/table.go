package policy

import (
	"fmt"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
)

// Row is one line of the decision table: a kind of probe result, the
// condition under which the action applies, and the action with its why.
type Row struct {
	// Rule is the number of the rule in Decide's order (0 hold, 1
	// stay … 6 redeploy): the first rule that matches decides.
	Rule      int    `json:"rule"`
	Result    string `json:"result"`
	Condition string `json:"condition"`
	Action    Action `json:"action"`
	Why       string `json:"why"`
}

// decisiveResults labels the rows of the decisive outcomes.
const decisiveResults = "refused/dns/unreachable"

// tableNow is an arbitrary fixed instant: the table must not depend on the clock.
var tableNow = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// DecisionTable builds the decision table (Decide's rules, in order) for
// the given settings by running Decide on a representative input for each
// row, so the table can never disagree with the policy. Rows that the
// settings make impossible (ignore-grace with a zero grace, ignore-blip with
// a threshold of 1) are left out; rows for escalated timeouts and overdue
// TLS errors are added when those settings are on.
func DecisionTable(s Settings) []Row {
	if s.FailureThreshold < 1 {
		s.FailureThreshold = 1
	}
	b := tableBuilder{s: s}

	b.add("unknown", "-", classify.Unknown, classify.LocalError, History{})
	b.add("pass", "-", classify.Pass, classify.OK, History{})
	b.add("pass", "after a redeploy", classify.Pass, classify.OK, History{RecoveryPending: true})

	tlsCond := "-"
	if s.TLSPendingMax > 0 {
		tlsCond = "failing <= " + dur(s.TLSPendingMax)
	}
	b.add("tls", tlsCond, classify.TLS, classify.TLSUnknownAuthority, History{TLSFailingSince: tableNow.Add(-s.TLSPendingMax / 2)})

	n := s.EscalateTimeoutsAfter
	if n != 1 {
		cond := "-"
		if n > 1 {
			cond = fmt.Sprintf("< %d in a row", n)
		}
		b.add("timeout", cond, classify.Timeout, classify.HeadersTimeout, History{})
	}

	b.decisive(decisiveResults, "", classify.Refused, classify.ConnRefused, History{})
	if s.TLSPendingMax > 0 {
		overdue := s.TLSPendingMax + s.TLSPendingMax/2
		b.decisive("tls", "failing > "+dur(s.TLSPendingMax)+", ", classify.TLS, classify.TLSUnknownAuthority,
			History{TLSFailingSince: tableNow.Add(-overdue)})
	}
	if n > 0 {
		b.decisive("timeout", fmt.Sprintf(">= %d in a row, ", n), classify.Timeout, classify.HeadersTimeout,
			History{TimeoutStreak: n - 1})
	}
	return b.rows
}

type tableBuilder struct {
	s    Settings
	rows []Row
}

func (b *tableBuilder) add(result, cond string, o classify.Outcome, r classify.Reason, h History) {
	d, _ := Decide(Input{Outcome: o, Reason: r, History: h, Settings: b.s, Now: tableNow})
	b.rows = append(b.rows, Row{Rule: RuleOf(d.Action), Result: result, Condition: cond, Action: d.Action, Why: d.Why})
}

// decisive adds the grace, blip and redeploy rows of a result that counts
// as decisive, prefixing each condition with why it is decisive.
func (b *tableBuilder) decisive(result, prefix string, o classify.Outcome, r classify.Reason, h History) {
	s := b.s
	if s.Grace > 0 {
		young := h
		young.StartedAt = tableNow.Add(-s.Grace / 4)
		b.add(result, prefix+"age < "+dur(s.Grace), o, r, young)
	}
	old := h
	old.StartedAt = tableNow.Add(-pastGraceAge(s.Grace))
	if s.FailureThreshold > 1 {
		b.add(result, fmt.Sprintf("%spast grace, streak < %d", prefix, s.FailureThreshold), o, r, old)
	}
	old.Streak = s.FailureThreshold - 1
	b.add(result, fmt.Sprintf("%spast grace, streak reaches %d", prefix, s.FailureThreshold), o, r, old)
}

// pastGraceAge is a round age well past the grace window: 10m0s for the
// default two minutes.
func pastGraceAge(grace time.Duration) time.Duration {
	if grace <= 0 {
		return 10 * time.Minute
	}
	return 5 * grace
}

// RuleOf is the number of the rule of Decide that gives action (0 for hold).
func RuleOf(a Action) int {
	for i, x := range []Action{Stay, PendingTLS, IgnoreTimeout, IgnoreGrace, IgnoreBlip, Redeploy} {
		if x == a {
			return i + 1
		}
	}
	return 0
}

// ExampleAges are the ages the table's examples use: inside the grace
// window (a quarter of it) and well past it (five times it, 10m by default).
func ExampleAges(grace time.Duration) (young, old time.Duration) {
	return grace / 4, pastGraceAge(grace)
}
