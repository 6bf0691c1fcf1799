package amqpwire

// amqp:// and amqps:// as a kind: its reasons, and the answer its exchange
// hands the classifier, the report and drain-test (classify.Answer).

import (
	"fmt"

	"github.com/healthctl/healthctl/internal/classify"
)

// The reasons of an AMQP answer. All are unreachable.
const (
	// AuthRefused is Connection.Close 403 ACCESS_REFUSED to the login
	// (wrong password, unknown user, guest from another host), or a
	// server that closed the connection after Start-Ok without a word
	// (RabbitMQ's answer to refused credentials for a client that does
	// not announce authentication_failure_close).
	AuthRefused classify.Reason = "amqp_auth"
	// VhostRefused is Connection.Close 530 NOT_ALLOWED to
	// Connection.Open: the virtual host does not exist, or the user has
	// no access to it (or a connection limit of it is reached).
	VhostRefused classify.Reason = "amqp_vhost"
	// ServerError is any other Close (541 INTERNAL_ERROR, 320
	// CONNECTION_FORCED...), a close without a word after Open, or a
	// server that does not offer PLAIN.
	ServerError classify.Reason = "amqp_error"
	// Protocol is an answer that is not AMQP 0-9-1: the server's own
	// protocol header (it speaks another version), another protocol, a
	// close without an answer.
	Protocol classify.Reason = "amqp_protocol"
)

// Kind is the AMQP kind's declaration.
var Kind = classify.Declare(classify.Kind{
	Name:        "amqp",
	NotProtocol: Protocol,
	Silence:     "no Connection.Start",
	Reasons: []classify.ReasonDef{
		{Reason: AuthRefused, Outcome: classify.Unreachable, Credentials: true,
			Why: "the AMQP broker refused the URL's credentials: a redeploy does not change them",
			Doc: "Connection.Close 403 ACCESS_REFUSED to the login, or a close after it"},
		{Reason: VhostRefused, Outcome: classify.Unreachable, Credentials: true,
			Why: "the AMQP broker refused the URL's virtual host to its user (no such vhost, or no access to it): a redeploy does not change that",
			Doc: "Connection.Close 530 NOT_ALLOWED to Connection.Open"},
		{Reason: ServerError, Outcome: classify.Unreachable, Doc: "any other Connection.Close, or a close without an answer to Connection.Open"},
		{Reason: Protocol, Outcome: classify.Unreachable, Doc: "the answer is not AMQP 0-9-1 (the server's own protocol header, another protocol)"},
	},
})

// Answer is what an AMQP probe got, read or not (classify.Answer): the
// server's Connection.Start (product, version, cluster), the user and
// virtual host the URL named, and how far the connection went: logged in
// (Open-Ok), accepting connections (Start, no credentials to log in
// with), the server's Close, or where it closed the connection. Every
// string is redacted.
type Answer struct {
	Product     string `json:"product,omitempty"`
	Version     string `json:"version,omitempty"`
	ClusterName string `json:"cluster_name,omitempty"`
	Mechanisms  string `json:"mechanisms,omitempty"`
	User        string `json:"user,omitempty"`
	Vhost       string `json:"vhost"`
	// LoggedIn: Connection.Open-Ok for the URL's credentials and vhost.
	LoggedIn bool `json:"logged_in,omitempty"`
	// Accepting: a Connection.Start, and no credentials in the URL to
	// log in with (pg_isready's "accepting connections").
	Accepting bool `json:"accepting,omitempty"`
	// Close is the server's Connection.Close; After names the method it
	// answered.
	Close *CloseSaid `json:"close,omitempty"`
	// ClosedAfter names the method the server closed the connection
	// after without answering it.
	ClosedAfter string `json:"closed_after,omitempty"`
	// NoPlain: the server offers no PLAIN mechanism for the login.
	NoPlain bool `json:"no_plain,omitempty"`
	// Speaks is what a server that sent its own protocol header speaks
	// ("AMQP 1-0-0").
	Speaks string `json:"speaks,omitempty"`
	// Seen is what came when it was not AMQP.
	Seen string `json:"seen,omitempty"`

	// Read: the exchange ended without an error and read something.
	Read bool `json:"-"`
}

// CloseSaid is a server's Connection.Close.
type CloseSaid struct {
	Code  uint16 `json:"code"`
	Name  string `json:"name,omitempty"`
	Text  string `json:"text"`
	After string `json:"after"`
}

// Kind is the AMQP kind (classify.Answer).
func (*Answer) Kind() *classify.Kind { return Kind }

// Reason names what an AMQP server answered.
func (a *Answer) Reason() classify.Reason {
	switch {
	case !a.Read || a.Seen != "" || a.Speaks != "":
		return Protocol
	case a.LoggedIn || a.Accepting:
		return classify.OK
	case a.Close != nil && a.Close.Code == 403:
		return AuthRefused
	case a.Close != nil && a.Close.Code == 530 && a.Close.After == MethodName(ClassConnection, MethodOpen):
		return VhostRefused
	case a.Close == nil && a.ClosedAfter == MethodName(ClassConnection, MethodStartOk):
		return AuthRefused
	case a.Close != nil || a.ClosedAfter != "" || a.NoPlain:
		return ServerError
	}
	return Protocol
}

// Text says what an AMQP answer that did not pass was, quoting the server.
func (a *Answer) Text(r classify.Reason, err error) string {
	switch {
	case a.Speaks != "":
		return "not AMQP 0-9-1: the server answered the protocol header with its own: it speaks " + a.Speaks
	case r == Protocol && a.Seen != "":
		return "not AMQP: the server sent " + a.Seen
	case r == Protocol && err != nil:
		return "not AMQP: " + classify.ErrorText(err)
	case a.Close != nil:
		return fmt.Sprintf("the AMQP broker closed the connection in answer to %s: %s", a.Close.After, a.Close.said())
	case a.ClosedAfter != "" && r == AuthRefused:
		return fmt.Sprintf("the AMQP broker closed the connection after %s without a word, as RabbitMQ does to refused credentials", a.ClosedAfter)
	case a.ClosedAfter != "":
		return fmt.Sprintf("the AMQP broker closed the connection without answering %s", a.ClosedAfter)
	case a.NoPlain:
		return fmt.Sprintf("the AMQP broker offers no PLAIN login for the URL's credentials (mechanisms: %s)", a.Mechanisms)
	}
	return ""
}

// said is "403 ACCESS_REFUSED \"Login was refused...\"".
func (c *CloseSaid) said() string {
	s := fmt.Sprint(c.Code)
	if c.Name != "" {
		s += " " + c.Name
	}
	return fmt.Sprintf("%s %q", s, c.Text)
}

// Said is "logged in", "accepting connections" or the Close's code.
func (a *Answer) Said() string {
	switch {
	case a.LoggedIn:
		return "logged in"
	case a.Accepting:
		return "accepting connections"
	case a.Close != nil:
		return fmt.Sprintf("%d %s", a.Close.Code, a.Close.Name)
	}
	return ""
}

// Lines are the server, and what it answered the URL's user and vhost.
func (a *Answer) Lines() []string {
	if !a.Read || a.Speaks != "" || a.Seen != "" {
		return nil
	}
	var lines []string
	if a.Product != "" {
		server := a.Product + " " + a.Version
		if a.ClusterName != "" {
			server += ", cluster " + a.ClusterName
		}
		lines = append(lines, "server: "+server)
	}
	var ans string
	switch {
	case a.LoggedIn:
		ans = "logged in (Connection.Open-Ok)"
	case a.Accepting:
		ans = "accepting connections (not logged in: no credentials in the URL; Connection.Start offers " + a.Mechanisms + ")"
	case a.Close != nil:
		ans = "Connection.Close " + a.Close.said() + " in answer to " + a.Close.After
	case a.ClosedAfter != "":
		ans = "closed after " + a.ClosedAfter
	case a.NoPlain:
		ans = "no PLAIN mechanism (" + a.Mechanisms + ")"
	}
	if a.User == "" && a.Accepting {
		return append(lines, fmt.Sprintf("vhost %q: %s", a.Vhost, ans))
	}
	return append(lines, fmt.Sprintf("user %q, vhost %q: %s", a.User, a.Vhost, ans))
}

// JSON is the answer itself.
func (a *Answer) JSON() any { return a }

// Status is the first line's status column (none: "-").
func (*Answer) Status() string { return "" }
