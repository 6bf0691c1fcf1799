package classify

import (
	"errors"
	"slices"
)

// A kind is a protocol other than HTTP that a scheme row speaks (gRPC
// health, Redis, PostgreSQL, a bare connect). Each declares itself once, in
// its own place (its wire package, or its exchange file): its reasons and
// what the classifier says of a connection that read no whole answer of
// it. Its exchange hands the classifier one Answer; nothing here tests for
// a protocol.

// Kind is a kind's declaration (Declare). The probe puts its row's kind
// on every Observation it makes, whether or not an answer came.
type Kind struct {
	// Name is the kind's name ("redis").
	Name string
	// NotProtocol is the reason of a probe that connected and read no
	// whole answer of the kind (garbage, a close), and of one whose
	// exchange left no Answer; "" is protocol_error.
	NotProtocol Reason
	// Silence names what never came when the read window closed before
	// the first answer ("no answer"); "" keeps HTTP's "no response
	// headers".
	Silence string
	// Reasons are the kind's own reasons, in the docs' order.
	Reasons []ReasonDef
}

// ReasonDef declares one reason: its outcome, whether it is a service
// warming up, whether it refuses the URL's credentials, and the words the
// policy says of it.
type ReasonDef struct {
	Reason  Reason
	Outcome Outcome
	// Warming: a service in a passing state that a redeploy would only
	// start over or cannot cure (Redis LOADING, PostgreSQL starting up):
	// the policy ignores it as it ignores a timeout, and says Why.
	Warming bool
	// Credentials: the server refused the URL's credentials: a redeploy
	// does not change them, the policy says Why.
	Credentials bool
	// Why is the policy's reason for Warming or Credentials.
	Why string
	// Doc is the reason's one line (docs/outcomes.md says it at length).
	Doc string
}

// Answer is what a kind's exchange read, in the one shape the classifier,
// the report and drain-test read without knowing the kind. Every string in
// it is already redacted.
type Answer interface {
	// Kind is the kind's declaration; its Name is the answer's key in
	// -o json and its label in the details.
	Kind() *Kind
	// Reason is the answer's reason (OK when it passes), for a probe
	// whose exchange ended without an error.
	Reason() Reason
	// Text is the sentence for r, one of the kind's own reasons, quoting
	// the server; err is the error that ended the probe (nil when an
	// answer was read). "" leaves the generic sentence.
	Text(r Reason, err error) string
	// Said is the server's short word ("SERVING", "+PONG", "accepting
	// connections", "SQLSTATE 57P03"), "" when it said nothing of its
	// protocol: drain-test's poll.
	Said() string
	// Status is what stands in the first line's status column where an
	// HTTP status would (one word: "SERVING"), "" for "-".
	Status() string
	// Lines are the details' lines (after the kind's label), none
	// when there is nothing to say.
	Lines() []string
	// JSON is the object under Kind().Name in -o json, nil for none.
	JSON() any
}

// Declare registers a kind: its reasons join Reasons (before the unknown
// outcome's, with the other kinds') and the outcome table. A wire package
// or exchange file calls it once, for a package-level variable.
func Declare(k Kind) *Kind {
	var rs []Reason
	for i, d := range k.Reasons {
		if _, dup := declared[d.Reason]; dup || slices.Contains(Reasons, d.Reason) {
			panic("classify: reason " + string(d.Reason) + " declared twice")
		}
		declared[d.Reason] = &k.Reasons[i]
		rs = append(rs, d.Reason)
	}
	Reasons = slices.Insert(Reasons, slices.Index(Reasons, LocalError), rs...)
	return &k
}

// declared holds every kind's reasons by name. Declare fills it during
// package initialisation, which every start pays, probe included: it holds
// pointers (a declaration is 72 bytes) and is made with room for the
// kinds' reasons (about 40), so that it does not grow as they come.
var declared = make(map[Reason]*ReasonDef, 48)

// Declared is the declaration of a kind's reason (ok false for the
// generic reasons, which this package lists itself).
func Declared(r Reason) (ReasonDef, bool) {
	if d, ok := declared[r]; ok {
		return *d, true
	}
	return ReasonDef{}, false
}

// CredentialReasons are the declared reasons that refuse the URL's
// credentials (redis_auth, postgres_auth…), in Reasons' order.
func CredentialReasons() []Reason {
	var rs []Reason
	for _, r := range Reasons {
		if d, ok := declared[r]; ok && d.Credentials {
			rs = append(rs, r)
		}
	}
	return rs
}

// Owns says r is one of the kind's own reasons.
func (k *Kind) Owns(r Reason) bool {
	if k == nil {
		return false
	}
	for _, d := range k.Reasons {
		if d.Reason == r {
			return true
		}
	}
	return false
}

// notProtocol is the reason of a probe of k that connected and read no
// whole answer of its protocol.
func (k *Kind) notProtocol() Reason {
	if k == nil || k.NotProtocol == "" {
		return ProtocolError
	}
	return k.NotProtocol
}

// Warming says r is a service in a passing state that a redeploy would
// only start over or cannot cure (its kind declares it so: Redis loading
// its data set, PostgreSQL starting up). The policy ignores it as it
// ignores a timeout.
func Warming(r Reason) bool {
	d, ok := declared[r]
	return ok && d.Warming
}

// ErrNotTLS is what an exchange's error wraps (errors.Is) when the server
// said, in its protocol, that it does not speak TLS where the URL asks for
// it (PostgreSQL's N to an SSLRequest): tls_not_tls.
var ErrNotTLS = errors.New("the server does not speak TLS here")
