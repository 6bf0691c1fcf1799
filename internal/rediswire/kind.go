package rediswire

// redis:// and rediss:// as a kind: its reasons, and the answer its
// exchange hands the classifier, the report and drain-test
// (classify.Answer).

import (
	"fmt"
	"strings"

	"github.com/healthctl/healthctl/internal/classify"
)

// The reasons of a Redis answer. All are unreachable; the policy treats
// the warming ones as it treats a timeout.
const (
	// Loading is -LOADING: the server is loading its dataset.
	Loading classify.Reason = "redis_loading"
	// MasterDown is -MASTERDOWN: a replica that lost its master and
	// serves no stale data.
	MasterDown classify.Reason = "redis_masterdown"
	// Busy is -BUSY: a script or function runs past its time limit.
	Busy classify.Reason = "redis_busy"
	// AuthRefused is -NOAUTH or -WRONGPASS: credentials are needed, or
	// the ones given were refused (any error to AUTH: a later PING may
	// pass as the default user, which the URL did not ask for).
	AuthRefused classify.Reason = "redis_auth"
	// ClusterDown is a cluster-mode server whose CLUSTER INFO says
	// cluster_state:fail: PING answers, every key command -CLUSTERDOWN.
	ClusterDown classify.Reason = "redis_cluster_down"
	// ErrorReply is any other error reply (and a Sentinel's port, which
	// serves no keys).
	ErrorReply classify.Reason = "redis_error"
	// Protocol is an answer that is not RESP (another protocol on the
	// port), or a connection closed without a reply.
	Protocol classify.Reason = "redis_protocol"
)

// warmingUp is the policy's words for a server loading or held busy.
const warmingUp = "Redis is still warming up (loading its data set, or held by a script): a slow service is not a dead one, and a redeploy would start it over, ignore it"

// Kind is the Redis kind's declaration.
var Kind = classify.Declare(classify.Kind{
	Name:        "redis",
	NotProtocol: Protocol,
	Silence:     "no answer",
	Reasons: []classify.ReasonDef{
		{Reason: Loading, Outcome: classify.Unreachable, Warming: true, Why: warmingUp, Doc: "-LOADING: the server is loading its data set"},
		{Reason: MasterDown, Outcome: classify.Unreachable, Warming: true,
			Why: "the Redis replica is waiting for its master: a redeploy of the replica does not bring the master back, ignore it",
			Doc: "-MASTERDOWN: a replica without its master"},
		{Reason: Busy, Outcome: classify.Unreachable, Warming: true, Why: warmingUp, Doc: "-BUSY: a script runs past its time limit"},
		{Reason: AuthRefused, Outcome: classify.Unreachable, Credentials: true,
			Why: "Redis refused the URL's credentials (AUTH): a redeploy does not change them",
			Doc: "-NOAUTH or a refused AUTH"},
		{Reason: ClusterDown, Outcome: classify.Unreachable, Doc: "CLUSTER INFO says cluster_state:fail"},
		{Reason: ErrorReply, Outcome: classify.Unreachable, Doc: "any other error reply, or a Sentinel's port"},
		{Reason: Protocol, Outcome: classify.Unreachable, Doc: "the answer is not RESP"},
	},
})

// Answer is what a Redis probe got, read or not (classify.Answer): the
// reply to each command sent, as the server said it (redacted). Mode is
// INFO server's redis_mode when it is not standalone (sentinel, cluster),
// ClusterState CLUSTER INFO's cluster_state on a cluster. Seen is what
// came when it was not RESP.
type Answer struct {
	Auth         string `json:"auth,omitempty"`
	Select       string `json:"select,omitempty"`
	Ping         string `json:"ping,omitempty"`
	Mode         string `json:"mode,omitempty"`
	ClusterState string `json:"cluster_state,omitempty"`
	Seen         string `json:"seen,omitempty"`

	// Read: the exchange ended without an error and read something.
	Read bool `json:"-"`
	// NotRESP: what came was not RESP at all.
	NotRESP bool `json:"-"`
	// Before are the replies to AUTH and SELECT, in order, with the
	// command each answers.
	Before []Said `json:"-"`
	// ClusterSlotsOK is CLUSTER INFO's cluster_slots_ok.
	ClusterSlotsOK string `json:"-"`
	// Quoted is what the server said that was not Redis's answer to
	// PING, quoted for the sentence.
	Quoted string `json:"-"`
}

// Said is one reply to a command sent before PING.
type Said struct {
	Command string
	Reply   string
}

// Kind is the Redis kind (classify.Answer).
func (*Answer) Kind() *classify.Kind { return Kind }

// Reason names what a Redis server answered.
func (a *Answer) Reason() classify.Reason {
	if !a.Read || a.NotRESP {
		return Protocol
	}
	if a.Mode == "sentinel" {
		// A Sentinel answers PING but serves no key.
		return ErrorReply
	}
	for _, b := range a.Before {
		// A refused AUTH leaves the connection the default user's: a
		// later PING may pass, but the URL's credentials did not.
		if r, ok := errorReason(b.Reply); ok && b.Command == "AUTH" && !unneededPassword(b.Reply) {
			if classify.Warming(r) {
				return r
			}
			return AuthRefused
		}
	}
	if r, ok := errorReason(a.Ping); ok {
		return r
	}
	for _, b := range a.Before {
		if r, ok := errorReason(b.Reply); ok && b.Command == "SELECT" {
			// The database asked for does not exist (or this user may
			// not use it): PING alone does not say that.
			return r
		}
	}
	if a.Ping != "+PONG" {
		return Protocol
	}
	if a.ClusterState != "" && a.ClusterState != "ok" {
		return ClusterDown
	}
	return classify.OK
}

// unneededPassword is the error a server whose default user has no
// password answers to AUTH with a password alone: nothing was refused, the
// connection is the user the URL named (redis-cli -a and ioredis go on, a
// warning said).
func unneededPassword(reply string) bool {
	return strings.HasPrefix(reply, "-ERR AUTH <password> called without any password configured") ||
		// Redis before 6 said it so.
		strings.HasPrefix(reply, "-ERR Client sent AUTH, but no password is set")
}

// errorReason names an error reply by its first word.
func errorReason(reply string) (classify.Reason, bool) {
	if !strings.HasPrefix(reply, "-") {
		return "", false
	}
	code, _, _ := strings.Cut(reply[1:], " ")
	switch code {
	case "LOADING":
		return Loading, true
	case "MASTERDOWN":
		return MasterDown, true
	case "BUSY":
		return Busy, true
	case "NOAUTH", "WRONGPASS":
		return AuthRefused, true
	}
	if strings.HasPrefix(reply, "-ERR invalid password") {
		// Redis before 6 refuses a wrong password so.
		return AuthRefused, true
	}
	return ErrorReply, true
}

// orNone is s, or "none" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Text says what a Redis answer that did not pass was, quoting what the
// server said.
func (a *Answer) Text(r classify.Reason, err error) string {
	switch {
	case r == Protocol && a.Quoted != "":
		return "not Redis: the server sent " + a.Quoted
	case r == Protocol && err != nil:
		return "not Redis: " + classify.ErrorText(err)
	case r == Protocol:
		return "not a Redis answer to PING: " + a.Quoted
	case r == ClusterDown:
		return fmt.Sprintf("the Redis cluster is down: CLUSTER INFO says cluster_state:%s (%s of 16384 hash slots ok); PING answers, key commands get -CLUSTERDOWN", a.ClusterState, orNone(a.ClusterSlotsOK))
	case a.Read && a.Mode == "sentinel":
		return "a Redis Sentinel answered (INFO server: redis_mode:sentinel), not a Redis server: it serves no keys; a client asks it for the master's address"
	case a.Read:
		cmd, reply := "PING", a.Ping
		for _, b := range a.Before {
			// A refused AUTH says more than the NOAUTH that follows
			// it; a refused SELECT is the reason when PING answered.
			if strings.HasPrefix(b.Reply, "-") && (r == AuthRefused && b.Command == "AUTH" || !strings.HasPrefix(reply, "-")) {
				cmd, reply = b.Command, b.Reply
				break
			}
		}
		return fmt.Sprintf("Redis answered %s with %q", cmd, reply)
	}
	return ""
}

// Said is PING's reply ("+PONG", "-LOADING …").
func (a *Answer) Said() string { return a.Ping }

// Lines are what Redis answered, command by command, as it said it.
func (a *Answer) Lines() []string {
	if !a.Read {
		return nil
	}
	var lines []string
	for _, c := range [...]struct{ cmd, reply string }{{"AUTH", a.Auth}, {"SELECT", a.Select}, {"PING", a.Ping}} {
		if c.reply != "" {
			lines = append(lines, c.cmd+": "+c.reply)
		}
	}
	return lines
}

// JSON is the answer itself, once something was read.
func (a *Answer) JSON() any {
	if !a.Read {
		return nil
	}
	return a
}

// Status is the first line's status column (none: "-").
func (*Answer) Status() string { return "" }
