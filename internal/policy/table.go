package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
)

// Row is one line of the decision table: a kind of probe result, the
// condition under which the action applies, and the action with its why.
type Row struct {
	// Rule is the number of the rule in Decide's order (0 hold, 1
	// stay … 6 redeploy): the first rule that matches decides.
	Rule int `json:"rule"`
	// Sub tells apart the rules that share a number: "a" for an answer
	// no redeploy can fix (401, 403, 407: stay), "b" for a transient one
	// (429: held as a timeout is).
	Sub       string `json:"sub,omitempty"`
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
	b.add("pass", "degraded", classify.Pass, classify.Degraded, History{})

	tlsCond := "-"
	if s.TLSPendingMax > 0 {
		tlsCond = "failing <= " + dur(s.TLSPendingMax)
	}
	b.add("tls", tlsCond, classify.TLS, classify.TLSUnknownAuthority, History{TLSFailingSince: tableNow.Add(-s.TLSPendingMax / 2)})

	n := s.EscalateTimeoutsAfter
	cond := "-"
	if n > 1 {
		cond = fmt.Sprintf("< %d in a row", n)
	}
	if n != 1 {
		b.add("timeout", cond, classify.Timeout, classify.HeadersTimeout, History{})
	}
	b.addStatus("unreachable", "HTTP 401", 401, `Basic realm="app"`)
	b.addStatus("unreachable", "HTTP 403", 403, "")
	b.addStatus("unreachable", "HTTP 407", 407, `Basic realm="proxy"`)
	if logins := classify.CredentialReasons(); len(logins) > 0 {
		// Every kind's refused login, as the kinds declare them.
		names := make([]string, len(logins))
		for i, r := range logins {
			names[i] = string(r)
		}
		b.add("unreachable", "a login refused ("+strings.Join(names, ", ")+")", classify.Unreachable, logins[0], History{})
	}
	if n != 1 {
		c429 := "HTTP 429"
		if cond != "-" {
			c429 += ", " + cond
		}
		b.addStatus("unreachable", c429, 429, "")
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
		b.decisive("unreachable", fmt.Sprintf("HTTP 429, >= %d in a row, ", n), classify.Unreachable, classify.HTTPStatus,
			History{TimeoutStreak: n - 1}, 429)
	}
	return b.rows
}

type tableBuilder struct {
	s    Settings
	rows []Row
}

func (b *tableBuilder) add(result, cond string, o classify.Outcome, r classify.Reason, h History) {
	b.addInput(result, cond, Input{Outcome: o, Reason: r, History: h})
}

// addStatus adds the row of an HTTP answer whose status the policy reads
// (401, 403, 407: no redeploy fixes them; 429: throttled), with the
// challenge the example sent.
func (b *tableBuilder) addStatus(result, cond string, status int, challenge string) {
	b.addInput(result, cond, Input{Outcome: classify.Unreachable, Reason: classify.HTTPStatus, HTTPStatus: status, Challenge: challenge})
}

func (b *tableBuilder) addInput(result, cond string, in Input) {
	in.Settings, in.Now = b.s, tableNow
	d, _ := Decide(in)
	row := Row{Rule: RuleOf(d.Action), Result: result, Condition: cond, Action: d.Action, Why: d.Why}
	switch {
	case d.Action == Stay && in.Outcome == classify.Unreachable:
		row.Rule, row.Sub = 3, "a"
	case d.Action == IgnoreTimeout && in.HTTPStatus != 0:
		row.Rule, row.Sub = 3, "b"
	}
	b.rows = append(b.rows, row)
}

// decisive adds the grace, blip and redeploy rows of a result that counts
// as decisive, prefixing each condition with why it is decisive.
// status, when given, is the HTTP status of the example.
func (b *tableBuilder) decisive(result, prefix string, o classify.Outcome, r classify.Reason, h History, status ...int) {
	s := b.s
	in := Input{Outcome: o, Reason: r}
	if len(status) > 0 {
		in.HTTPStatus = status[0]
	}
	if s.Grace > 0 {
		in.History = h
		in.History.StartedAt = tableNow.Add(-s.Grace / 4)
		b.addInput(result, prefix+"age < "+dur(s.Grace), in)
	}
	old := h
	old.StartedAt = tableNow.Add(-pastGraceAge(s.Grace))
	if s.FailureThreshold > 1 {
		in.History = old
		b.addInput(result, fmt.Sprintf("%spast grace, streak < %d", prefix, s.FailureThreshold), in)
	}
	old.Streak = s.FailureThreshold - 1
	in.History = old
	b.addInput(result, fmt.Sprintf("%spast grace, streak reaches %d", prefix, s.FailureThreshold), in)
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
