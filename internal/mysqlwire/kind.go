package mysqlwire

// mysql:// as a kind: its reasons, and the answer its exchange hands the
// classifier, the report and drain-test (classify.Answer).

import (
	"fmt"
	"strings"

	"github.com/healthctl/healthctl/internal/classify"
)

// The reasons of a MySQL/MariaDB answer. All are unreachable; the policy
// treats the warming ones as it treats a timeout.
const (
	// TooManyConnections is ERROR 1040 (or 1203, the user's own limit):
	// no connection slot left.
	TooManyConnections classify.Reason = "mysql_too_many_connections"
	// AuthRefused is ERROR 1045 (or 1044, 1698): the URL's user or
	// password refused.
	AuthRefused classify.Reason = "mysql_auth"
	// HostBlocked is ERROR 1129 (blocked after max_connect_errors) or 1130
	// (this host may not connect at all).
	HostBlocked classify.Reason = "mysql_host_blocked"
	// NoDatabase is ERROR 1049: the URL's database does not exist.
	NoDatabase classify.Reason = "mysql_database"
	// StartingUp is a server that says it is starting up (or is in
	// offline mode while it comes up).
	StartingUp classify.Reason = "mysql_starting_up"
	// ShuttingDown is ERROR 1053: the server is shutting down.
	ShuttingDown classify.Reason = "mysql_shutting_down"
	// ServerError is any other ERR packet.
	ServerError classify.Reason = "mysql_error"
	// Protocol is an answer that is not MySQL's.
	Protocol classify.Reason = "mysql_protocol"
)

// Kind is the MySQL kind's declaration.
var Kind = classify.Declare(classify.Kind{
	Name:        "mysql",
	NotProtocol: Protocol,
	Silence:     "no greeting",
	Reasons: []classify.ReasonDef{
		{Reason: TooManyConnections, Outcome: classify.Unreachable, Doc: "ERROR 1040: no connection slot left"},
		{Reason: AuthRefused, Outcome: classify.Unreachable, Credentials: true,
			Why: "MySQL refused the URL's credentials (its user, password or host grant): a redeploy does not change them",
			Doc: "ERROR 1045: the URL's user or password refused"},
		{Reason: HostBlocked, Outcome: classify.Unreachable, Doc: "ERROR 1129/1130: this host is blocked or not allowed"},
		{Reason: NoDatabase, Outcome: classify.Unreachable, Doc: "ERROR 1049: the URL's database does not exist"},
		{Reason: StartingUp, Outcome: classify.Unreachable, Warming: true,
			Why: "MySQL is starting up: a slow start is not a dead server, and a redeploy would start it over, ignore it",
			Doc: "the server is starting up"},
		{Reason: ShuttingDown, Outcome: classify.Unreachable, Warming: true,
			Why: "MySQL is shutting down: it is being stopped or restarted already, and a redeploy now would only race that, ignore it",
			Doc: "ERROR 1053: the server is shutting down"},
		{Reason: ServerError, Outcome: classify.Unreachable, Doc: "any other ERR packet"},
		{Reason: Protocol, Outcome: classify.Unreachable, Doc: "the answer is not MySQL's"},
	},
})

// Reply is what a MySQL probe got, read or not (classify.Answer), as -o
// json shows it: the server's version from its greeting, whether the
// URL's credentials logged in and a COM_PING was answered, or the ERR
// packet the server sent (redacted). Seen is what came when it was not
// MySQL.
type Reply struct {
	User     string `json:"user"`
	Database string `json:"database,omitempty"`
	Version  string `json:"server_version,omitempty"`
	// LoggedIn: the URL's password logged in and COM_PING was answered.
	LoggedIn  bool   `json:"logged_in,omitempty"`
	ErrorCode int    `json:"error_code,omitempty"`
	SQLState  string `json:"sqlstate,omitempty"`
	Message   string `json:"message,omitempty"`
	Seen      string `json:"seen,omitempty"`

	// Read: the exchange ended without an error with an answer.
	Read bool `json:"-"`
	// Login: the URL had a password: its login is the question.
	// Greeted: the server sent its greeting (before any ERR).
	Login, Greeted bool `json:"-"`
}

// Kind is the MySQL kind (classify.Answer).
func (*Reply) Kind() *classify.Kind { return Kind }

// Reason names what a MySQL server answered.
func (a *Reply) Reason() classify.Reason {
	switch {
	case !a.Read || a.Seen != "":
		return Protocol
	case a.ErrorCode == 0 && (a.LoggedIn || !a.Login && a.Greeted):
		return classify.OK
	case a.ErrorCode == 0:
		return Protocol
	case !a.Login && a.Greeted && deniedLogin(a.ErrorCode):
		// No password to give: the server greeted and turned the
		// passwordless login away, as mysqladmin ping takes it: it
		// accepts connections.
		return classify.OK
	}
	msg := strings.ToLower(a.Message)
	switch a.ErrorCode {
	case 1040, 1203:
		return TooManyConnections
	case 1044, 1045, 1698:
		return AuthRefused
	case 1129, 1130:
		return HostBlocked
	case 1049:
		return NoDatabase
	case 1053:
		return ShuttingDown
	}
	switch {
	case strings.Contains(msg, "starting up"), strings.Contains(msg, "is starting"):
		return StartingUp
	case strings.Contains(msg, "shutdown"), strings.Contains(msg, "shutting down"):
		return ShuttingDown
	}
	return ServerError
}

// deniedLogin says code refuses a login's credentials.
func deniedLogin(code int) bool { return code == 1044 || code == 1045 || code == 1698 }

// Text says what a MySQL answer that did not pass was, quoting the server.
func (a *Reply) Text(r classify.Reason, err error) string {
	switch {
	case r == Protocol && a.Seen != "":
		return "not MySQL: the server sent " + a.Seen
	case r == Protocol && err != nil:
		return "not MySQL: " + classify.ErrorText(err)
	case a.ErrorCode != 0:
		return fmt.Sprintf("MySQL refused the connection: ERROR %d (%s): %s", a.ErrorCode, orNone(a.SQLState), a.Message)
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "no SQLSTATE"
	}
	return s
}

// Said is "logged in", "accepting connections" or the ERR's code.
func (a *Reply) Said() string {
	switch {
	case a.LoggedIn:
		return "logged in"
	case a.Read && a.Greeted && !a.Login && (a.ErrorCode == 0 || deniedLogin(a.ErrorCode)):
		return "accepting connections"
	case a.ErrorCode != 0:
		return fmt.Sprintf("ERROR %d", a.ErrorCode)
	}
	return ""
}

// Status is the first line's status column (none: "-").
func (*Reply) Status() string { return "" }

// Lines is the user, the server's version and what it answered.
func (a *Reply) Lines() []string {
	if !a.Read || a.Seen != "" {
		return nil
	}
	ans := "accepting connections (not logged in: no password in the URL)"
	switch {
	case !a.Login && a.Greeted && deniedLogin(a.ErrorCode):
	case a.ErrorCode != 0:
		ans = fmt.Sprintf("ERROR %d (%s): %s", a.ErrorCode, orNone(a.SQLState), a.Message)
	case a.LoggedIn:
		ans = "logged in with the URL's password, COM_PING answered"
	}
	who := fmt.Sprintf("user %q", a.User)
	if a.Database != "" {
		who += fmt.Sprintf(", database %q", a.Database)
	}
	if a.Version != "" {
		who += ", server " + a.Version
	}
	return []string{who + ": " + ans}
}

// JSON is the reply itself, once something was read.
func (a *Reply) JSON() any {
	if !a.Read {
		return nil
	}
	return a
}
