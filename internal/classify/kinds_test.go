package classify

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestRedisReason(t *testing.T) {
	auth := func(reply string) []RedisReply { return []RedisReply{{"AUTH", reply}} }
	for _, tc := range []struct {
		a    *RedisAnswer
		want Reason
		text string
	}{
		{&RedisAnswer{Ping: "+PONG"}, OK, ""},
		{&RedisAnswer{Ping: "-LOADING Redis is loading the dataset in memory"}, RedisLoading, `Redis answered PING with "-LOADING Redis is loading the dataset in memory"`},
		{&RedisAnswer{Ping: "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."}, RedisMasterDown, "PING"},
		{&RedisAnswer{Ping: "-BUSY Redis is busy running a script."}, RedisBusy, "PING"},
		{&RedisAnswer{Ping: "-NOAUTH Authentication required."}, RedisAuth, "-NOAUTH"},
		{&RedisAnswer{Before: auth("-WRONGPASS invalid username-password pair or user is disabled."), Ping: "-NOAUTH Authentication required."}, RedisAuth, `Redis answered AUTH with "-WRONGPASS`},
		{&RedisAnswer{Before: auth("-ERR invalid password"), Ping: "-NOAUTH Authentication required."}, RedisAuth, ""},
		// Credentials a server without a password does not need: redis-cli -a pings on too.
		{&RedisAnswer{Before: auth("-ERR AUTH <password> called without any password configured for the default user."), Ping: "+PONG"}, OK, ""},
		{&RedisAnswer{Before: auth("-ERR Client sent AUTH, but no password is set"), Ping: "+PONG"}, OK, ""},
		{&RedisAnswer{Before: []RedisReply{{"SELECT", "-ERR DB index is out of range"}}, Ping: "+PONG"}, RedisError, `Redis answered SELECT with "-ERR DB index is out of range"`},
		{&RedisAnswer{Ping: "-ERR unknown command 'PING', with args beginning with: "}, RedisError, "unknown command"},
		{&RedisAnswer{Ping: "-NOPERM this user has no permissions to run the 'ping' command"}, RedisError, "NOPERM"},
		{&RedisAnswer{Ping: "-DENIED Redis is running in protected mode"}, RedisError, "DENIED"},
		{&RedisAnswer{Ping: "+OK"}, RedisProtocol, ""},
		{&RedisAnswer{Ping: ":1"}, RedisProtocol, ""},
		{&RedisAnswer{NotRESP: true}, RedisProtocol, ""},
		// A refused AUTH is the reason whatever PING says: the connection
		// went on as the default user, not the URL's.
		{&RedisAnswer{Before: auth("-WRONGPASS invalid username-password pair or user is disabled."), Ping: "+PONG"}, RedisAuth, `Redis answered AUTH with "-WRONGPASS`},
		{&RedisAnswer{Before: auth("-ERR invalid username-password pair"), Ping: "+PONG"}, RedisAuth, `AUTH`},
		{&RedisAnswer{Before: auth("-NOPERM this user has no permissions"), Ping: "+PONG"}, RedisAuth, `AUTH`},
		{&RedisAnswer{Before: append(auth("-WRONGPASS x"), RedisReply{"SELECT", "-ERR DB index is out of range"}), Ping: "+PONG"}, RedisAuth, `Redis answered AUTH with "-WRONGPASS x"`},
		{&RedisAnswer{Before: auth("-LOADING Redis is loading the dataset in memory"), Ping: "-LOADING Redis is loading the dataset in memory"}, RedisLoading, "LOADING"},
		// A cluster-mode server: its state decides once PING answered.
		{&RedisAnswer{Ping: "+PONG", Mode: "cluster", ClusterState: "ok", ClusterSlotsOK: "16384"}, OK, ""},
		{&RedisAnswer{Ping: "+PONG", Mode: "cluster", ClusterState: "fail", ClusterSlotsOK: "0"}, RedisClusterDown, "cluster_state:fail (0 of 16384 hash slots ok)"},
		{&RedisAnswer{Ping: "-LOADING x", ClusterState: "fail"}, RedisLoading, "LOADING"},
		{&RedisAnswer{Before: auth("-WRONGPASS x"), Ping: "+PONG", ClusterState: "fail"}, RedisAuth, "WRONGPASS"},
		// A Sentinel answers PING and serves no key.
		{&RedisAnswer{Ping: "+PONG", Mode: "sentinel"}, RedisError, "a Redis Sentinel answered"},
	} {
		o := Observation{Protocol: ProtoRedis, Redis: tc.a}
		out, r := Classify(o)
		if r != tc.want || out != tc.want.Outcome() {
			t.Errorf("%+v: %s %s, want %s", tc.a, out, r, tc.want)
		}
		if s := Sentence(o, r, Facts{}); !strings.Contains(s, tc.text) {
			t.Errorf("%+v: sentence %q, want it to contain %q", tc.a, s, tc.text)
		}
	}
}

func TestPostgresReason(t *testing.T) {
	for _, tc := range []struct {
		a    PostgresAnswer
		want Reason
	}{
		{PostgresAnswer{Auth: true}, OK},
		{PostgresAnswer{Code: "57P03", Message: "the database system is starting up"}, PostgresStartingUp},
		{PostgresAnswer{Code: "57P03", Message: "the database system is shutting down"}, PostgresShuttingDown},
		{PostgresAnswer{Code: "57P03", Message: "the database system is in recovery mode"}, PostgresRecovery},
		{PostgresAnswer{Code: "57P03", Message: "the database system is not yet accepting connections"}, PostgresRecovery},
		{PostgresAnswer{Code: "57P03", Message: "the database system is not accepting connections"}, PostgresRecovery},
		{PostgresAnswer{Code: "53300", Message: "sorry, too many clients already"}, PostgresTooManyConnections},
		{PostgresAnswer{Code: "53300", Message: "remaining connection slots are reserved for roles with the SUPERUSER attribute"}, PostgresTooManyConnections},
		{PostgresAnswer{Code: "28000", Message: `no pg_hba.conf entry for host "127.0.0.1"`}, OK},
		{PostgresAnswer{Code: "28P01", Message: `password authentication failed for user "x"`}, OK},
		// Without a password these mean "accepting connections", as
		// pg_isready says; with one, the application's login was refused.
		{PostgresAnswer{Code: "28P01", Message: `password authentication failed for user "x"`, Login: true}, PostgresAuth},
		// PgBouncer 1.18's refusal of a client's password.
		{PostgresAnswer{Code: "08P01", Message: "SASL authentication failed", Login: true}, PostgresAuth},
		{PostgresAnswer{Code: "08P01", Message: "server login has been failing, try again later (server_login_retry)", Login: true}, PostgresError},
		{PostgresAnswer{Code: "28000", Message: `no pg_hba.conf entry for host "127.0.0.1"`, Login: true}, PostgresAuth},
		{PostgresAnswer{Code: "3D000", Message: `database "x" does not exist`}, PostgresDatabase},
		{PostgresAnswer{Code: "3D000", Message: `database "x" does not exist`, Login: true}, PostgresDatabase},
		{PostgresAnswer{Code: "53300", Message: "remaining connection slots are reserved for roles with the SUPERUSER attribute", Login: true}, PostgresTooManyConnections},
		{PostgresAnswer{Auth: true, LoggedIn: true, Login: true}, OK},
		{PostgresAnswer{Auth: true, LoggedIn: true, Login: true, ReadOnly: true}, PostgresReadOnly},
		{PostgresAnswer{Code: "08P01", Message: "invalid startup packet layout"}, PostgresError},
		{PostgresAnswer{NotPostgres: true}, PostgresProtocol},
	} {
		o := Observation{Protocol: ProtoPostgres, Postgres: &tc.a}
		out, r := Classify(o)
		if r != tc.want || out != tc.want.Outcome() {
			t.Errorf("%+v: %s %s, want %s", tc.a, out, r, tc.want)
		}
		if s := Sentence(o, r, Facts{}); r != OK && r != PostgresProtocol && r != PostgresReadOnly && !strings.Contains(s, tc.a.Code) {
			t.Errorf("%+v: sentence %q names no SQLSTATE", tc.a, s)
		}
	}
}

func TestKindErrors(t *testing.T) {
	for _, tc := range []struct {
		o    Observation
		want Reason
		text string
	}{
		{Observation{Protocol: ProtoRedis, Err: io.ErrUnexpectedEOF, Stage: StageHeaders}, RedisProtocol, "not Redis: unexpected EOF"},
		{Observation{Protocol: ProtoPostgres, Err: io.EOF, Stage: StageHeaders}, PostgresProtocol, "not PostgreSQL: EOF"},
		{Observation{Protocol: ProtoPostgres, Err: ErrPostgresNoSSL, Stage: StageTLS}, TLSNotTLS, "sslmode=require"},
		{Observation{Protocol: ProtoRedis, Err: errors.New("x"), Stage: StageHeaders, WindowClosed: true}, HeadersTimeout, "within"},
	} {
		_, r := Classify(tc.o)
		s := Sentence(tc.o, r, Facts{WindowFlag: "--read-timeout"})
		if r != tc.want || !strings.Contains(s, tc.text) {
			t.Errorf("%+v: %s %q, want %s %q", tc.o, r, s, tc.want, tc.text)
		}
	}
}
