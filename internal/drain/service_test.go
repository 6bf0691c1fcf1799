package drain

import (
	"testing"

	"github.com/healthctl/healthctl/internal/probe"
)

// TestServiceAnswer: a Redis or PostgreSQL answer is a health answer (its
// pass ready, its refusal the flip); no answer of the protocol is none.
func TestServiceAnswer(t *testing.T) {
	for _, tc := range []struct {
		res  probe.Result
		want string
	}{
		{probe.Result{Redis: &probe.RedisInfo{Ping: "+PONG"}}, "+PONG"},
		{probe.Result{Redis: &probe.RedisInfo{Ping: "-LOADING Redis is loading the dataset in memory"}}, "-LOADING Redis is loading the dataset in memory"},
		{probe.Result{Redis: &probe.RedisInfo{Seen: "HTTP/1.1 400 Bad Request"}}, ""},
		{probe.Result{Postgres: &probe.PostgresInfo{Auth: "sasl"}}, "accepting connections"},
		{probe.Result{Postgres: &probe.PostgresInfo{SQLState: "57P03"}}, "SQLSTATE 57P03"},
		{probe.Result{Postgres: &probe.PostgresInfo{User: "postgres"}}, ""},
		{probe.Result{HTTPStatus: 200}, ""},
	} {
		if got := serviceAnswer(tc.res); got != tc.want {
			t.Errorf("%+v %+v: %q, want %q", tc.res.Redis, tc.res.Postgres, got, tc.want)
		}
	}
}
