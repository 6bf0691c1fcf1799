package drain

import (
	"testing"

	"github.com/healthctl/healthctl/internal/pgwire"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/rediswire"
)

// TestServiceAnswer: a Redis or PostgreSQL answer is a health answer (its
// pass ready, its refusal the flip); no answer of the protocol is none.
func TestServiceAnswer(t *testing.T) {
	for _, tc := range []struct {
		res  probe.Result
		want string
	}{
		{probe.Result{Answer: &rediswire.Answer{Read: true, Ping: "+PONG"}}, "+PONG"},
		{probe.Result{Answer: &rediswire.Answer{Read: true, Ping: "-LOADING Redis is loading the dataset in memory"}}, "-LOADING Redis is loading the dataset in memory"},
		{probe.Result{Answer: &rediswire.Answer{Read: true, NotRESP: true, Seen: "HTTP/1.1 400 Bad Request"}}, ""},
		{probe.Result{Answer: &pgwire.Reply{Auth: "sasl"}}, "accepting connections"},
		{probe.Result{Answer: &pgwire.Reply{SQLState: "57P03"}}, "SQLSTATE 57P03"},
		{probe.Result{Answer: &pgwire.Reply{User: "postgres"}}, ""},
		{probe.Result{HTTPStatus: 200}, ""},
	} {
		if got := answerSaid(tc.res); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.res.Answer, got, tc.want)
		}
	}
}
