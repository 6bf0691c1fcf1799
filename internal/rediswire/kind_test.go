package rediswire

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
)

func TestReason(t *testing.T) {
	auth := func(reply string) []Said { return []Said{{"AUTH", reply}} }
	for _, tc := range []struct {
		a    *Answer
		want classify.Reason
		text string
	}{
		{&Answer{Read: true, Ping: "+PONG"}, classify.OK, ""},
		{&Answer{Read: true, Ping: "-LOADING Redis is loading the dataset in memory"}, Loading, `Redis answered PING with "-LOADING Redis is loading the dataset in memory"`},
		{&Answer{Read: true, Ping: "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."}, MasterDown, "PING"},
		{&Answer{Read: true, Ping: "-BUSY Redis is busy running a script."}, Busy, "PING"},
		{&Answer{Read: true, Ping: "-NOAUTH Authentication required."}, AuthRefused, "-NOAUTH"},
		{&Answer{Read: true, Before: auth("-WRONGPASS invalid username-password pair or user is disabled."), Ping: "-NOAUTH Authentication required."}, AuthRefused, `Redis answered AUTH with "-WRONGPASS`},
		{&Answer{Read: true, Before: auth("-ERR invalid password"), Ping: "-NOAUTH Authentication required."}, AuthRefused, ""},
		// Credentials a server without a password does not need: redis-cli -a pings on too.
		{&Answer{Read: true, Before: auth("-ERR AUTH <password> called without any password configured for the default user."), Ping: "+PONG"}, classify.OK, ""},
		{&Answer{Read: true, Before: auth("-ERR Client sent AUTH, but no password is set"), Ping: "+PONG"}, classify.OK, ""},
		{&Answer{Read: true, Before: []Said{{"SELECT", "-ERR DB index is out of range"}}, Ping: "+PONG"}, ErrorReply, `Redis answered SELECT with "-ERR DB index is out of range"`},
		{&Answer{Read: true, Ping: "-ERR unknown command 'PING', with args beginning with: "}, ErrorReply, "unknown command"},
		{&Answer{Read: true, Ping: "-NOPERM this user has no permissions to run the 'ping' command"}, ErrorReply, "NOPERM"},
		{&Answer{Read: true, Ping: "-DENIED Redis is running in protected mode"}, ErrorReply, "DENIED"},
		{&Answer{Read: true, Ping: "+OK"}, Protocol, ""},
		{&Answer{Read: true, Ping: ":1"}, Protocol, ""},
		{&Answer{Read: true, NotRESP: true}, Protocol, ""},
		// A refused AUTH is the reason whatever PING says: the connection
		// went on as the default user, not the URL's.
		{&Answer{Read: true, Before: auth("-WRONGPASS invalid username-password pair or user is disabled."), Ping: "+PONG"}, AuthRefused, `Redis answered AUTH with "-WRONGPASS`},
		{&Answer{Read: true, Before: auth("-ERR invalid username-password pair"), Ping: "+PONG"}, AuthRefused, `AUTH`},
		{&Answer{Read: true, Before: auth("-NOPERM this user has no permissions"), Ping: "+PONG"}, AuthRefused, `AUTH`},
		{&Answer{Read: true, Before: append(auth("-WRONGPASS x"), Said{"SELECT", "-ERR DB index is out of range"}), Ping: "+PONG"}, AuthRefused, `Redis answered AUTH with "-WRONGPASS x"`},
		{&Answer{Read: true, Before: auth("-LOADING Redis is loading the dataset in memory"), Ping: "-LOADING Redis is loading the dataset in memory"}, Loading, "LOADING"},
		// A cluster-mode server: its state decides once PING answered.
		{&Answer{Read: true, Ping: "+PONG", Mode: "cluster", ClusterState: "ok", ClusterSlotsOK: "16384"}, classify.OK, ""},
		{&Answer{Read: true, Ping: "+PONG", Mode: "cluster", ClusterState: "fail", ClusterSlotsOK: "0"}, ClusterDown, "cluster_state:fail (0 of 16384 hash slots ok)"},
		{&Answer{Read: true, Ping: "-LOADING x", ClusterState: "fail"}, Loading, "LOADING"},
		{&Answer{Read: true, Before: auth("-WRONGPASS x"), Ping: "+PONG", ClusterState: "fail"}, AuthRefused, "WRONGPASS"},
		// A Sentinel answers PING and serves no key.
		{&Answer{Read: true, Ping: "+PONG", Mode: "sentinel"}, ErrorReply, "a Redis Sentinel answered"},
	} {
		o := classify.Observation{Kind: Kind, Answer: tc.a}
		out, r := classify.Classify(o)
		if r != tc.want || out != tc.want.Outcome() {
			t.Errorf("%+v: %s %s, want %s", tc.a, out, r, tc.want)
		}
		if s := classify.Sentence(o, r, classify.Facts{}); !strings.Contains(s, tc.text) {
			t.Errorf("%+v: sentence %q, want it to contain %q", tc.a, s, tc.text)
		}
	}
}

func TestKindErrors(t *testing.T) {
	for _, tc := range []struct {
		o    classify.Observation
		want classify.Reason
		text string
	}{
		{classify.Observation{Kind: Kind, Answer: &Answer{}, Err: io.ErrUnexpectedEOF, Stage: classify.StageHeaders}, Protocol, "not Redis: unexpected EOF"},
		{classify.Observation{Kind: Kind, Answer: &Answer{}, Err: errors.New("x"), Stage: classify.StageHeaders, WindowClosed: true}, classify.HeadersTimeout, "no answer within"},
		// An exchange that left no answer is still the kind's.
		{classify.Observation{Kind: Kind}, Protocol, ""},
	} {
		_, r := classify.Classify(tc.o)
		s := classify.Sentence(tc.o, r, classify.Facts{WindowFlag: "--read-timeout"})
		if r != tc.want || !strings.Contains(s, tc.text) {
			t.Errorf("%+v: %s %q, want %s %q", tc.o, r, s, tc.want, tc.text)
		}
	}
}
