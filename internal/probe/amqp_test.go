package probe_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/amqpwire"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/wirefix"
	"github.com/healthctl/healthctl/internal/probe"
)

// TestAMQPStates probes the fake broker in each of its states: the
// reason, the sentence, the JSON, what the broker saw (the credentials
// and vhost sent, the polite close), and that the password is never shown.
func TestAMQPStates(t *testing.T) {
	for _, tc := range []struct {
		mode     wirefix.AMQPMode
		url      string // after amqp://, before the fixture's address
		path     string
		reason   classify.Reason
		text     string
		json     string
		sawLast  string // the broker's last log line
		sawLogin string
	}{
		{mode: wirefix.AMQPOK, url: "guest:s3cretpw@", reason: classify.OK,
			json:     `"product":"RabbitMQ","version":"3.10.8","cluster_name":"rabbit@fixture","mechanisms":"PLAIN AMQPLAIN","user":"guest","vhost":"/","logged_in":true`,
			sawLogin: "login PLAIN guest s3cretpw", sawLast: "close 200"},
		{mode: wirefix.AMQPOK, url: "app:s3cretpw@", path: "/orders%2Feu", reason: classify.OK,
			json: `"vhost":"orders/eu"`, sawLast: "close 200"},
		{mode: wirefix.AMQPOK, url: "app:s3cretpw@", path: "/%2F", reason: classify.OK, json: `"vhost":"/"`, sawLast: "close 200"},
		// A lone "/" is the default vhost, as amqp091-go and pika read it.
		{mode: wirefix.AMQPOK, url: "app:s3cretpw@", path: "/", reason: classify.OK, json: `"vhost":"/"`, sawLogin: "open /"},
		// No credentials: Start alone, pg_isready's "accepting connections".
		{mode: wirefix.AMQPOK, reason: classify.OK, json: `"vhost":"/","accepting":true`, sawLast: "header \"AMQP\\x00\\x00\\t\\x01\""},
		// A user without a password logs in with an empty one (amqp091-go).
		{mode: wirefix.AMQPOK, url: "guest@", reason: classify.OK, sawLogin: "login PLAIN guest "},
		{mode: wirefix.AMQPAuth, url: "guest:s3cretpw@", reason: amqpwire.AuthRefused,
			text:    `the AMQP broker closed the connection in answer to Connection.Start-Ok: 403 ACCESS_REFUSED "ACCESS_REFUSED - Login was refused`,
			json:    `"close":{"code":403,"name":"ACCESS_REFUSED"`,
			sawLast: "close-ok"},
		{mode: wirefix.AMQPAuthSilent, url: "guest:s3cretpw@", reason: amqpwire.AuthRefused,
			text: "closed the connection after Connection.Start-Ok without a word", json: `"closed_after":"Connection.Start-Ok"`},
		// The broker's own refusal does not need the fixture's mode.
		{mode: "", url: "guest:wrong@", reason: amqpwire.AuthRefused, text: "403 ACCESS_REFUSED"},
		{mode: wirefix.AMQPVhost, url: "guest:s3cretpw@", path: "/nope", reason: amqpwire.VhostRefused,
			text: `in answer to Connection.Open: 530 NOT_ALLOWED "NOT_ALLOWED - vhost nope not found"`, sawLast: "close-ok"},
		{mode: wirefix.AMQPInternal, url: "guest:s3cretpw@", reason: amqpwire.ServerError,
			text: `541 INTERNAL_ERROR "INTERNAL_ERROR - vhost '/' is down"`},
		// Without credentials, a vhost's trouble is not seen: Start only.
		{mode: wirefix.AMQPVhost, path: "/nope", reason: classify.OK},
		{mode: wirefix.AMQPHeader, url: "guest:s3cretpw@", reason: amqpwire.Protocol,
			text: "not AMQP 0-9-1: the server answered the protocol header with its own: it speaks AMQP 1-0-0", json: `"speaks":"AMQP 1-0-0"`},
		{mode: wirefix.AMQPGarbage, reason: amqpwire.Protocol, text: `not AMQP: the server sent "HTTP/1.1 400 Bad Request"`},
		{mode: wirefix.AMQPClose, reason: amqpwire.Protocol, text: "not AMQP: "},
		{mode: wirefix.AMQPSilent, reason: classify.HeadersTimeout, text: "no Connection.Start"},
	} {
		mode := tc.mode
		user, pass := "", ""
		if mode == "" {
			mode, user, pass = wirefix.AMQPOK, "guest", "guest"
		}
		srv, err := wirefix.NewAMQPServer(t, mode, user, pass)
		if err != nil {
			t.Fatal(err)
		}
		raw := "amqp://" + tc.url + srv.Addr + tc.path
		res := probe.Run(t.Context(), opts(t, raw, "", nil))
		if res.Reason != tc.reason || !strings.Contains(res.Error, tc.text) {
			t.Errorf("%s (%s): %s %q, want %s %q", raw, tc.mode, res.Reason, res.Error, tc.reason, tc.text)
		}
		var b []byte
		if res.Answer != nil {
			b, _ = json.Marshal(res.Answer.JSON())
		}
		if !strings.Contains(string(b), tc.json) {
			t.Errorf("%s (%s): amqp %s, want %s", raw, tc.mode, b, tc.json)
		}
		seen := srv.Log()
		if tc.sawLogin != "" && !slices.Contains(seen, tc.sawLogin) {
			t.Errorf("%s (%s): the broker saw %q, want %q", raw, tc.mode, seen, tc.sawLogin)
		}
		if tc.sawLast != "" && !fixture.WaitFor(2*time.Second, func() bool { s := srv.Log(); return len(s) > 0 && s[len(s)-1] == tc.sawLast }) {
			t.Errorf("%s (%s): the broker saw %q, want it last %q", raw, tc.mode, srv.Log(), tc.sawLast)
		}
		out := res.URL + res.Error + string(b) + strings.Join(res.Answer.Lines(), "\n")
		if strings.Contains(out, "s3cretpw") {
			t.Errorf("%s (%s): the password shown: %s", raw, tc.mode, out)
		}
	}
}
