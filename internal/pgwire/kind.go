package pgwire

// postgres:// as a kind: its reasons, and the answer its exchange hands the
// classifier, the report and drain-test (classify.Answer).

import (
	"fmt"
	"strings"

	"github.com/healthctl/healthctl/internal/classify"
)

// The reasons of a PostgreSQL answer. All are unreachable; the policy
// treats the warming ones as it treats a timeout.
const (
	// StartingUp is 57P03 "the database system is starting up".
	StartingUp classify.Reason = "postgres_starting_up"
	// ShuttingDown is 57P03 "the database system is shutting down".
	ShuttingDown classify.Reason = "postgres_shutting_down"
	// Recovery is any other 57P03: in recovery, not yet consistent, a
	// standby with hot_standby off.
	Recovery classify.Reason = "postgres_recovery"
	// TooManyConnections is 53300: no connection slot left.
	TooManyConnections classify.Reason = "postgres_too_many_connections"
	// AuthRefused is 28P01 or 28000 to a login with the URL's password:
	// wrong password, no such role, pg_hba.conf refused it.
	AuthRefused classify.Reason = "postgres_auth"
	// NoDatabase is 3D000: the URL's database does not exist.
	NoDatabase classify.Reason = "postgres_database"
	// ReadOnly is a login whose session is read-only (a hot standby)
	// where the URL's target_session_attrs=read-write asked for one that
	// is not.
	ReadOnly classify.Reason = "postgres_read_only"
	// ServerError is any other ErrorResponse to the startup message.
	ServerError classify.Reason = "postgres_error"
	// Protocol is an answer that is not PostgreSQL's.
	Protocol classify.Reason = "postgres_protocol"
)

// Kind is the PostgreSQL kind's declaration.
var Kind = classify.Declare(classify.Kind{
	Name:        "postgres",
	NotProtocol: Protocol,
	Silence:     "no answer",
	Reasons: []classify.ReasonDef{
		{Reason: StartingUp, Outcome: classify.Unreachable, Warming: true, Why: replaying, Doc: "57P03: the database system is starting up"},
		{Reason: ShuttingDown, Outcome: classify.Unreachable, Warming: true,
			Why: "PostgreSQL is shutting down: it is being stopped or restarted already, and a redeploy now would only race that, ignore it",
			Doc: "57P03: the database system is shutting down"},
		{Reason: Recovery, Outcome: classify.Unreachable, Warming: true, Why: replaying, Doc: "57P03: in recovery, not yet accepting connections"},
		{Reason: TooManyConnections, Outcome: classify.Unreachable, Doc: "53300: no connection slot left"},
		{Reason: AuthRefused, Outcome: classify.Unreachable, Credentials: true,
			Why: "PostgreSQL refused the URL's credentials (its user, password or pg_hba.conf): a redeploy does not change them",
			Doc: "28P01/28000 to a login with the URL's password"},
		{Reason: NoDatabase, Outcome: classify.Unreachable, Doc: "3D000: the URL's database does not exist"},
		{Reason: ReadOnly, Outcome: classify.Unreachable, Doc: "a read-only session where read-write was asked for"},
		{Reason: ServerError, Outcome: classify.Unreachable, Doc: "any other ErrorResponse"},
		{Reason: Protocol, Outcome: classify.Unreachable, Doc: "the answer is not PostgreSQL's"},
	},
})

// replaying is the policy's words for a server starting up or in recovery.
const replaying = "PostgreSQL is starting up or replaying its log: a slow start is not a dead server, and a redeploy would start the replay over, ignore it"

// NoSSLError is a PostgreSQL server that answered N to the SSLRequest of
// an sslmode that insists on TLS: it does not speak TLS there
// (classify.ErrNotTLS).
type NoSSLError struct{}

func (NoSSLError) Error() string {
	return "the server does not support SSL, but sslmode=require asked for it"
}

// Is makes the error classify.ErrNotTLS.
func (NoSSLError) Is(target error) bool { return target == classify.ErrNotTLS }

// ErrNoSSL is the NoSSLError.
var ErrNoSSL error = NoSSLError{}

// Reply is what a PostgreSQL probe got, read or not (classify.Answer): the
// authentication the server asked for, or its error's SQLSTATE, severity,
// message and detail (redacted). Seen is what came when it was not
// PostgreSQL.
type Reply struct {
	User     string `json:"user"`
	Database string `json:"database"`
	SSL      bool   `json:"ssl,omitempty"`
	// LoggedIn: the URL's password logged in and an empty query was
	// answered; Auth is the authentication a server asked for of a probe
	// that had no password to give (pg_isready's "accepting connections").
	LoggedIn bool `json:"logged_in,omitempty"`
	// ReadOnly: the session was read-only where target_session_attrs=
	// read-write asked for one that is not.
	ReadOnly bool   `json:"read_only,omitempty"`
	Auth     string `json:"auth,omitempty"`
	SQLState string `json:"sqlstate,omitempty"`
	Severity string `json:"severity,omitempty"`
	Message  string `json:"message,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Seen     string `json:"seen,omitempty"`

	// Read: the exchange ended without an error with an answer.
	Read bool `json:"-"`
	// Login: the probe logged in with the URL's password (psql's
	// question, not pg_isready's).
	Login bool `json:"-"`
}

// Kind is the PostgreSQL kind (classify.Answer).
func (*Reply) Kind() *classify.Kind { return Kind }

// Reason names what a PostgreSQL server answered.
func (a *Reply) Reason() classify.Reason {
	switch {
	case !a.Read || a.Seen != "":
		return Protocol
	case a.ReadOnly:
		return ReadOnly
	case a.LoggedIn || a.Auth != "":
		return classify.OK
	case a.SQLState == "57P03":
		// One SQLSTATE for every "cannot connect now"; the message
		// tells them apart (PostgreSQL's own, in English: lc_messages
		// of the postmaster, which logs in English by default).
		switch {
		case strings.Contains(a.Message, "starting up"):
			return StartingUp
		case strings.Contains(a.Message, "shutting down"):
			return ShuttingDown
		}
		return Recovery
	case a.SQLState == "53300":
		return TooManyConnections
	case a.SQLState == "3D000":
		return NoDatabase
	case strings.HasPrefix(a.SQLState, "28") && a.Login:
		// The application's credentials were refused.
		return AuthRefused
	case a.SQLState == "08P01" && a.Login && strings.Contains(a.Message, "authentication failed"):
		// PgBouncer refuses a client's password with 08P01 ("SASL
		// authentication failed"), not 28P01.
		return AuthRefused
	case strings.HasPrefix(a.SQLState, "28"):
		// invalid authorization: the server got as far as
		// authenticating (pg_hba.conf refused, no such role, a password
		// needed): it accepts connections, as pg_isready says.
		return classify.OK
	}
	return ServerError
}

// Text says what a PostgreSQL answer that did not pass was, quoting the
// server.
func (a *Reply) Text(r classify.Reason, err error) string {
	switch {
	case r == Protocol && a.Seen != "":
		return "not PostgreSQL: the server sent " + a.Seen
	case r == Protocol && err != nil:
		return "not PostgreSQL: " + classify.ErrorText(err)
	case r == ReadOnly:
		return "PostgreSQL logged in, but the session is read-only (a hot standby, or default_transaction_read_only), and the URL's target_session_attrs=read-write asks for one that is not"
	case a.Read:
		return fmt.Sprintf("PostgreSQL refused the connection: %q (SQLSTATE %s)", a.Message, a.SQLState)
	}
	return ""
}

// Said is "logged in", "accepting connections" or the SQLSTATE.
func (a *Reply) Said() string {
	switch {
	case a.LoggedIn:
		return "logged in"
	case a.Auth != "":
		return "accepting connections"
	case a.SQLState != "":
		return "SQLSTATE " + a.SQLState
	}
	return ""
}

// Lines is the user and database and what the server answered them.
func (a *Reply) Lines() []string {
	if a.Auth == "" && a.SQLState == "" && !a.LoggedIn {
		return nil
	}
	ans := "accepting connections (not logged in: no password in the URL; authentication " + a.Auth + ")"
	if a.LoggedIn {
		ans = "logged in with the URL's password, an empty query answered"
	}
	if a.SQLState != "" {
		ans = fmt.Sprintf("%s %s: %s", a.Severity, a.SQLState, a.Message)
		if a.Detail != "" {
			ans += " (" + a.Detail + ")"
		}
	}
	return []string{fmt.Sprintf("user %q, database %q: %s", a.User, a.Database, ans)}
}

// JSON is the reply itself.
func (a *Reply) JSON() any { return a }

// Status is the first line's status column (none: "-").
func (*Reply) Status() string { return "" }
