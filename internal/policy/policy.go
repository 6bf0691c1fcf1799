// Package policy decides what a reconciler does with one probe result: the
// decision table of Decide's rules ("ignore the blip, redeploy the
// outage").
//
// It is pure: no I/O and no clock. Time arrives as Input.Now, and the only
// state is the History the caller carries from one probe to the next.
package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"

	"github.com/healthctl/healthctl/internal/words"
)

// Action is what the reconciler does with a target after one probe.
type Action string

// The actions, one per rule of Decide. Every action but Redeploy leaves the
// target running untouched: the only lever is "enqueue a redeploy", never stop
// or destroy.
const (
	Stay          Action = "stay"
	PendingTLS    Action = "pending-tls"
	IgnoreTimeout Action = "ignore-timeout"
	IgnoreGrace   Action = "ignore-grace"
	IgnoreBlip    Action = "ignore-blip"
	Redeploy      Action = "redeploy"
	// Hold is rule 0: the prober could not look (outcome unknown), so
	// nothing is decided and the streak is untouched.
	Hold Action = "hold"
)

// Settings are the knobs of the policy. DefaultSettings is the behaviour
// with no flag given.
type Settings struct {
	// Grace is how long a freshly started target is given to boot before a
	// decisive failure counts against it.
	Grace time.Duration
	// FailureThreshold is how many decisive failures in a row, past grace,
	// make an outage.
	FailureThreshold int
	// EscalateTimeoutsAfter makes the Nth timeout in a row, and every one
	// after it, count as decisive; 0 never does (a host that accepts but
	// never answers is then never redeployed).
	EscalateTimeoutsAfter int
	// TLSPendingMax makes a TLS error decisive once TLS has been failing for
	// longer than this; 0 waits for the certificate forever.
	TLSPendingMax time.Duration
}

// DefaultSettings returns the default policy: a two-minute grace window,
// one decisive failure past it is an outage, timeouts and TLS errors never are.
func DefaultSettings() Settings {
	return Settings{Grace: 2 * time.Minute, FailureThreshold: 1}
}

// Validate reports the first setting out of range, naming its flag.
func (s Settings) Validate() error {
	switch {
	case s.Grace < 0:
		return &SettingError{"grace", fmt.Sprintf("must not be negative, got %s", s.Grace)}
	case s.FailureThreshold < 1:
		return &SettingError{"failure-threshold", fmt.Sprintf("must be at least 1, got %d", s.FailureThreshold)}
	case s.EscalateTimeoutsAfter < 0:
		return &SettingError{"escalate-timeouts-after", fmt.Sprintf("must be 0 (never) or at least 1, got %d", s.EscalateTimeoutsAfter)}
	case s.TLSPendingMax < 0:
		return &SettingError{"tls-pending-max", fmt.Sprintf("must not be negative (0 waits forever), got %s", s.TLSPendingMax)}
	}
	return nil
}

// SettingError is a setting out of range; Setting is its flag name, so the
// caller can say where the value came from.
type SettingError struct {
	Setting string
	Msg     string
}

func (e *SettingError) Error() string { return "--" + e.Setting + " " + e.Msg }

// History is what a target carries from one probe to the next. watch persists
// it as JSON in its state file, so it stays small and every field is a fact
// about past probes.
type History struct {
	// StartedAt is when the target (or its last redeploy) started; zero means
	// unknown, which counts as past grace (a target whose start nobody
	// recorded is not given the benefit of the doubt).
	StartedAt time.Time `json:"started_at,omitzero"`
	// Streak counts decisive failures in a row past grace.
	Streak int `json:"streak,omitempty"`
	// TimeoutStreak counts timeouts in a row.
	TimeoutStreak int `json:"timeout_streak,omitempty"`
	// TLSFailingSince is when the current run of TLS errors began; zero when
	// the last result was not a TLS error.
	TLSFailingSince time.Time `json:"tls_failing_since,omitzero"`
	// RecoveryPending is set by a redeploy decision and cleared by the next
	// pass: a stale recovery marker, so a redeploy that did not help shows.
	RecoveryPending bool `json:"recovery_pending,omitempty"`
}

// Decision is the policy's answer for one probe result.
type Decision struct {
	Action Action `json:"action"`
	// Why is one sentence for a human operator, with the numbers that led
	// to the action.
	Why string `json:"why"`
	// Cleared is true when a pass cleared a recovery marker left by an
	// earlier redeploy: self-healing leaves no scar.
	Cleared bool `json:"cleared"`
}

// Input is everything Decide looks at.
type Input struct {
	Outcome  classify.Outcome
	Reason   classify.Reason
	History  History
	Settings Settings
	Now      time.Time
	// HTTPStatus is the status of an HTTP answer (0 for none): a 401,
	// 403 or 407 no redeploy can fix, a 429 that is only throttling.
	HTTPStatus int
	// Challenge is the answer's WWW-Authenticate (Proxy-Authenticate for
	// a 407), already redacted, for the why of a refused credential.
	Challenge string
}

// tlsCause says what a TLS failure's reason points at. Only what an
// issuing certificate explains (an authority not yet trusted, a default
// certificate served for another name while the real one is issued, one
// not valid yet) "may still be warming"; a server that is not TLS, has no
// protocol version in common, or wants a client certificate is
// misconfigured, which no waiting and no redeploy changes.
func tlsCause(r classify.Reason) (cause string, misconfigured bool) {
	switch r {
	case classify.TLSUnknownAuthority, classify.TLSHostnameMismatch, classify.TLSNotYetValid:
		return "the certificate may still be warming", false
	case classify.TLSExpired:
		return "the certificate has expired", false
	case classify.TLSInsecureAlgorithm:
		return "the certificate is signed with an insecure algorithm", false
	case classify.TLSNotTLS:
		return "the port does not speak TLS (plain text answered the handshake)", true
	case classify.TLSProtocolVersion:
		return "the server has no TLS version in common with this client", true
	case classify.TLSClientCertRequired:
		return "the server requires a client certificate (--cert/--key) it was not given or did not accept", true
	case classify.TLSRevoked:
		return "the certificate is revoked (the server's own OCSP staple says so): it needs a new certificate", true
	case classify.TLSMustStaple:
		// nginx fetches its staple after it starts: its first
		// handshakes have none.
		return "the certificate must be stapled and no OCSP staple came; a server that fetches its staple after it starts may still be warming", false
	}
	return "a TLS failure no issuing certificate explains", false
}

// Decide applies the rules below in order and returns the decision and
// the history to carry to the next probe. The rule order is the policy:
//
//  0. unknown (checked first): hold, the history untouched: the prober's
//     own trouble is never the target's;
//  1. pass: stay, clearing a recovery marker;
//  2. tls: pending-tls, unless it has been failing longer than TLSPendingMax;
//  3. timeout: ignore-timeout, unless it is the EscalateTimeoutsAfter-th in a row or later;
//  4. decisive and younger than Grace: ignore-grace;
//  5. decisive past grace, streak below FailureThreshold: ignore-blip;
//  6. otherwise redeploy, which resets the streaks and restarts the grace window.
//
// An outcome outside the closed set is treated as unreachable, the
// catch-all outcome.
func Decide(in Input) (Decision, History) {
	s := in.Settings
	if s.FailureThreshold < 1 {
		s.FailureThreshold = 1
	}
	h := in.History
	now := in.Now
	outcome := in.Outcome
	if !known(outcome) {
		outcome = classify.Unreachable
	}
	result := describe(outcome, in.Reason)

	// Rule 0: the probe could not be made from here. Nothing about the
	// target was learned, so nothing changes: not even the run counters.
	if outcome == classify.Unknown {
		return Decision{Action: Hold,
			Why: result + ": the probe could not be made from this machine, so nothing is known about the target: hold, decide nothing"}, h
	}

	// The run counters are facts about consecutive results; keep them first,
	// whatever the rules below decide.
	// A warming service (Redis loading its data set, held busy by a
	// script, a replica waiting for its master; PostgreSQL starting up,
	// in recovery, shutting down) is slow, not dead: counted and ignored
	// as a timeout is.
	warming := classify.Warming(in.Reason)
	throttled := throttledAnswer(outcome, in.Reason, in.HTTPStatus)
	if outcome == classify.Timeout || warming || throttled {
		h.TimeoutStreak++
	} else {
		h.TimeoutStreak = 0
	}
	if outcome == classify.TLS {
		if h.TLSFailingSince.IsZero() {
			h.TLSFailingSince = now
		}
	} else {
		h.TLSFailingSince = time.Time{}
	}

	// Rule 1: pass.
	if outcome == classify.Pass {
		d := Decision{Action: Stay, Why: passOKStay}
		switch {
		case in.Reason == classify.Degraded:
			// The service says it is not fully well; a redeploy is not
			// the remedy for a degraded dependency (and may make it worse).
			d.Why = result + ": the target answers and says it is degraded: stay running, never a redeploy"
		case result != passOK:
			d.Why = result + passStay
		}
		if h.RecoveryPending {
			d.Cleared = true
			d.Why = result + " after a redeploy was enqueued: the target has recovered, stay running and clear the recovery marker"
		}
		h.Streak = 0
		h.RecoveryPending = false
		return d, h
	}

	// Rule 3a: the server refused the probe's credentials. A redeploy of
	// the same service asks for the same ones: stay running, and say what
	// it asked for. The streak is untouched, as for a TLS misconfiguration.
	if cause, ok := credentialCause(outcome, in.Reason, in.HTTPStatus, in.Challenge); ok {
		what := result
		if in.Reason == classify.HTTPStatus {
			what = withStatus(result, in.HTTPStatus)
		}
		return Decision{Action: Stay, Why: what + ": " + cause + "; a redeploy cannot fix that, stay running"}, h
	}

	// Rules 2 and 3 either end here or turn the result into a decisive one;
	// what says why it became decisive. Rule 3b: a throttled answer (429)
	// and a service still warming up are held as a timeout is.
	if throttled {
		result = withStatus(result, in.HTTPStatus)
	}
	what := result
	if throttled || warming {
		why := throttledWhy
		if warming {
			why = warmingWhy(in.Reason)
		}
		if s.EscalateTimeoutsAfter <= 0 {
			return Decision{Action: IgnoreTimeout,
				Why: fmt.Sprintf("%s, the %s in a row: %s", result, ordinal(h.TimeoutStreak), why)}, h
		}
		if h.TimeoutStreak < s.EscalateTimeoutsAfter {
			return Decision{Action: IgnoreTimeout,
				Why: fmt.Sprintf("%s, the %s in a row, turning decisive from the %s: %s",
					result, ordinal(h.TimeoutStreak), ordinal(s.EscalateTimeoutsAfter), why)}, h
		}
		what = fmt.Sprintf("%s, the %s in a row, decisive from the %s", result, ordinal(h.TimeoutStreak), ordinal(s.EscalateTimeoutsAfter))
	}
	switch outcome {
	case classify.TLS:
		cause, misconfigured := tlsCause(in.Reason)
		if misconfigured {
			// No certificate being issued explains it, and a redeploy of
			// the same configuration cannot fix it: stay running, and
			// say what is wrong.
			return Decision{Action: PendingTLS,
				Why: result + ": " + cause + "; a redeploy cannot fix that, stay running (pending TLS)"}, h
		}
		failing := now.Sub(h.TLSFailingSince)
		if s.TLSPendingMax <= 0 {
			return Decision{Action: PendingTLS,
				Why: result + ": " + cause + ", stay running (pending TLS)"}, h
		}
		if failing <= s.TLSPendingMax {
			since := "failing for " + dur(failing)
			if failing == 0 {
				since = "the first TLS failure"
			}
			return Decision{Action: PendingTLS,
				Why: fmt.Sprintf("%s, %s, within the %s TLS pending limit: %s, stay running (pending TLS)",
					result, since, dur(s.TLSPendingMax), cause)}, h
		}
		what = fmt.Sprintf("%s, failing for %s, longer than the %s TLS pending limit, so decisive", result, dur(failing), dur(s.TLSPendingMax))
	case classify.Timeout:
		n := h.TimeoutStreak
		if s.EscalateTimeoutsAfter <= 0 {
			return Decision{Action: IgnoreTimeout,
				Why: fmt.Sprintf("%s, the %s in a row: a slow host is not a dead one, ignore it", result, ordinal(n))}, h
		}
		if n < s.EscalateTimeoutsAfter {
			return Decision{Action: IgnoreTimeout,
				Why: fmt.Sprintf("%s, the %s in a row, timeouts turn decisive from the %s: a slow host is not a dead one, ignore it",
					result, ordinal(n), ordinal(s.EscalateTimeoutsAfter))}, h
		}
		what = fmt.Sprintf("%s, the %s in a row, decisive from the %s", result, ordinal(n), ordinal(s.EscalateTimeoutsAfter))
	}

	// Rule 4: decisive, inside the grace window. Neither adds to the streak
	// nor resets it.
	age, ageKnown := time.Duration(0), !h.StartedAt.IsZero()
	if ageKnown {
		age = now.Sub(h.StartedAt)
		if age < s.Grace {
			return Decision{Action: IgnoreGrace,
				Why: fmt.Sprintf("%s, but the target is %s old, inside the %s grace window: still booting, ignore it",
					what, dur(age), dur(s.Grace))}, h
		}
	}

	// Rules 5 and 6: decisive, past grace.
	h.Streak++
	past := fmt.Sprintf("past the %s grace window (no recorded start time)", dur(s.Grace))
	if ageKnown {
		past = fmt.Sprintf("past the %s grace window (age %s)", dur(s.Grace), dur(age))
	}
	count := fmt.Sprintf("%d of %s in a row", h.Streak, words.Plural(s.FailureThreshold, "decisive failure"))
	if h.Streak > s.FailureThreshold {
		// Past the threshold (redeploys the fleet rule held, or a threshold
		// lowered between runs): "3 of 1" would read as a contradiction.
		count = fmt.Sprintf("%s in a row (threshold %d)", words.Plural(h.Streak, "decisive failure"), s.FailureThreshold)
	}
	if h.Streak < s.FailureThreshold {
		return Decision{Action: IgnoreBlip,
			Why: fmt.Sprintf("%s, %s, %s: one failure is not an outage, ignore it", what, past, count)}, h
	}

	// A redeploy makes a new environment: the streaks start over and so does
	// the grace window, which keeps a broken deploy from being redeployed in
	// a tight loop; a certificate is issued again, so its warming clock
	// restarts too.
	h.Streak = 0
	h.TimeoutStreak = 0
	if outcome == classify.TLS {
		h.TLSFailingSince = now
	}
	h.StartedAt = now
	h.RecoveryPending = true
	return Decision{Action: Redeploy,
		Why: fmt.Sprintf("%s, %s, %s: enqueue a redeploy", what, past, count)}, h
}

// ForProbe builds the history of a one-shot probe, which has no past: the
// start comes from the target's age (unknown, hence past grace, when !known or
// age < 0), TLS is taken to have failed since that start (so --tls-pending-max
// compares with the age), and the streaks are 0, so the probe's own result is
// its whole streak.
//
// A probe of a target of unknown age never treats a TLS error as decisive:
// with nothing to measure the failure against, it waits for the certificate.
func ForProbe(age time.Duration, known bool, now time.Time) History {
	if !known || age < 0 {
		return History{}
	}
	start := now.Add(-age)
	return History{StartedAt: start, TLSFailingSince: start}
}

func known(o classify.Outcome) bool {
	for _, k := range classify.Outcomes {
		if o == k {
			return true
		}
	}
	return false
}

// withStatus puts the status in a result's words: "unreachable
// (http_status 401)".
func withStatus(result string, status int) string {
	if strings.HasSuffix(result, ")") {
		return result[:len(result)-1] + " " + strconv.Itoa(status) + ")"
	}
	return result + " " + strconv.Itoa(status)
}

// throttledAnswer says the result is an HTTP 429: the server is
// throttling this client, which says nothing of its health.
func throttledAnswer(o classify.Outcome, r classify.Reason, status int) bool {
	return o == classify.Unreachable && r == classify.HTTPStatus && status == 429
}

// throttledWhy is why a 429 is ignored: the server answered, and asked to
// be asked later.
const throttledWhy = "the server is throttling this client (Too Many Requests), which is not an outage and which a redeploy would not change, ignore it"

// credentialCause is the cause of an answer that refuses the probe's
// credentials — HTTP 401, 403, 407 with the challenge the server sent, a
// Redis AUTH or PostgreSQL login refused; ok is false for any other result.
func credentialCause(o classify.Outcome, r classify.Reason, status int, challenge string) (cause string, ok bool) {
	if o != classify.Unreachable {
		return "", false
	}
	if d, ok := classify.Declared(r); ok && d.Credentials {
		// A kind's own refusal (a Redis AUTH, a PostgreSQL login): its
		// declaration says why.
		return d.Why, true
	}
	if r != classify.HTTPStatus {
		return "", false
	}
	switch status {
	case 401:
		cause = "the server wants credentials the probe did not give or that it refused (-u, -H Authorization)"
		if challenge != "" {
			cause += ", WWW-Authenticate: " + challenge
		}
	case 403:
		cause = "the server forbids the probe this URL (its credentials, address or path)"
	case 407:
		cause = "a proxy wants credentials the probe did not give or that it refused"
		if challenge != "" {
			cause += ", Proxy-Authenticate: " + challenge
		}
	default:
		return "", false
	}
	return cause, true
}

// warmingWhy is why a warming service is ignored: a redeploy would start
// its loading over, or cannot cure what it waits for.
func warmingWhy(r classify.Reason) string {
	if d, ok := classify.Declared(r); ok && d.Why != "" {
		// The kind's declaration says why its state is a warming one.
		return d.Why
	}
	return "the service is still warming up: a slow service is not a dead one, and a redeploy would start it over, ignore it"
}

// A pass's words, made once: a sweep decides on every target.
const (
	passOK     = string(classify.Pass) + " (" + string(classify.OK) + ")"
	passStay   = ": the target answers, stay running"
	passOKStay = passOK + passStay
)

// describe names a result the way the probe's text output does: outcome,
// then reason, as in "refused (conn_refused)".
func describe(o classify.Outcome, r classify.Reason) string {
	if o == classify.Pass && r == classify.OK {
		return passOK // most results: no string of their own
	}
	if r == "" {
		return string(o)
	}
	return string(o) + " (" + string(r) + ")"
}

// dur prints a duration without the noise of a clock's nanoseconds.
func dur(d time.Duration) string {
	switch {
	case d >= time.Second || d <= -time.Second:
		return d.Round(time.Second).String()
	case d >= time.Millisecond || d <= -time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.String()
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
