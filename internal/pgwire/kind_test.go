package pgwire

import (
	"io"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
)

func TestReason(t *testing.T) {
	for _, tc := range []struct {
		a    Reply
		want classify.Reason
	}{
		{Reply{Read: true, Auth: "sasl"}, classify.OK},
		{Reply{Read: true, SQLState: "57P03", Message: "the database system is starting up"}, StartingUp},
		{Reply{Read: true, SQLState: "57P03", Message: "the database system is shutting down"}, ShuttingDown},
		{Reply{Read: true, SQLState: "57P03", Message: "the database system is in recovery mode"}, Recovery},
		{Reply{Read: true, SQLState: "57P03", Message: "the database system is not yet accepting connections"}, Recovery},
		{Reply{Read: true, SQLState: "57P03", Message: "the database system is not accepting connections"}, Recovery},
		{Reply{Read: true, SQLState: "53300", Message: "sorry, too many clients already"}, TooManyConnections},
		{Reply{Read: true, SQLState: "53300", Message: "remaining connection slots are reserved for roles with the SUPERUSER attribute"}, TooManyConnections},
		{Reply{Read: true, SQLState: "28000", Message: `no pg_hba.conf entry for host "127.0.0.1"`}, classify.OK},
		{Reply{Read: true, SQLState: "28P01", Message: `password authentication failed for user "x"`}, classify.OK},
		// Without a password these mean "accepting connections", as
		// pg_isready says; with one, the application's login was refused.
		{Reply{Read: true, SQLState: "28P01", Message: `password authentication failed for user "x"`, Login: true}, AuthRefused},
		// PgBouncer 1.18's refusal of a client's password.
		{Reply{Read: true, SQLState: "08P01", Message: "SASL authentication failed", Login: true}, AuthRefused},
		{Reply{Read: true, SQLState: "08P01", Message: "server login has been failing, try again later (server_login_retry)", Login: true}, ServerError},
		{Reply{Read: true, SQLState: "28000", Message: `no pg_hba.conf entry for host "127.0.0.1"`, Login: true}, AuthRefused},
		{Reply{Read: true, SQLState: "3D000", Message: `database "x" does not exist`}, NoDatabase},
		{Reply{Read: true, SQLState: "3D000", Message: `database "x" does not exist`, Login: true}, NoDatabase},
		{Reply{Read: true, SQLState: "53300", Message: "remaining connection slots are reserved for roles with the SUPERUSER attribute", Login: true}, TooManyConnections},
		{Reply{Read: true, LoggedIn: true, Login: true}, classify.OK},
		{Reply{Read: true, LoggedIn: true, Login: true, ReadOnly: true}, ReadOnly},
		{Reply{Read: true, SQLState: "08P01", Message: "invalid startup packet layout"}, ServerError},
		{Reply{Read: true, Seen: "x"}, Protocol},
	} {
		o := classify.Observation{Kind: Kind, Answer: &tc.a}
		out, r := classify.Classify(o)
		if r != tc.want || out != tc.want.Outcome() {
			t.Errorf("%+v: %s %s, want %s", tc.a, out, r, tc.want)
		}
		if s := classify.Sentence(o, r, classify.Facts{}); r != classify.OK && r != Protocol && r != ReadOnly && !strings.Contains(s, tc.a.SQLState) {
			t.Errorf("%+v: sentence %q names no SQLSTATE", tc.a, s)
		}
	}
}

func TestKindErrors(t *testing.T) {
	for _, tc := range []struct {
		o    classify.Observation
		want classify.Reason
		text string
	}{
		{classify.Observation{Kind: Kind, Answer: &Reply{}, Err: io.EOF, Stage: classify.StageHeaders}, Protocol, "not PostgreSQL: EOF"},
		{classify.Observation{Kind: Kind, Answer: &Reply{}, Err: ErrNoSSL, Stage: classify.StageTLS}, classify.TLSNotTLS, "sslmode=require"},
		{classify.Observation{Kind: Kind}, Protocol, ""},
	} {
		_, r := classify.Classify(tc.o)
		s := classify.Sentence(tc.o, r, classify.Facts{WindowFlag: "--read-timeout"})
		if r != tc.want || !strings.Contains(s, tc.text) {
			t.Errorf("%+v: %s %q, want %s %q", tc.o, r, s, tc.want, tc.text)
		}
	}
}
