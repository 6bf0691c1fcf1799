package scheme

import (
	"net/url"
	"strings"
	"testing"
)

// TestDatabaseRowsShareTheirRules: every database row refuses a fragment
// (naming its own form) and a control character before its wire package's
// rules run.
func TestDatabaseRowsShareTheirRules(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"redis://h/1#x", "redis URL has a fragment (want redis://[[USER]:PASSWORD@]HOST[:PORT][/DB])"},
		{"unix:///r.sock#x", "unix URL has a fragment (want unix:///PATH/TO/redis.sock"},
		{"rediss://h/%01", "rediss URL's database name has a control character"},
		{"postgres://h/app#x", "postgres URL has a fragment (want postgres://[[USER]:PASSWORD@]HOST"},
		{"mysql://h/app#x?a=b", "mysql URL has a fragment (want mysql://[USER[:PASSWORD]@]HOST[:PORT][/DB])"},
		{"amqps://h/v%7F", "amqps URL's database name has a control character"},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		row, ok := LookupScheme(u.Scheme)
		if !ok {
			t.Fatalf("no row for %s", c.url)
		}
		err, own := row.CheckURL(u)
		if !own || err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v (own rules %v), want %q", c.url, err, own, c.want)
		}
	}
}
