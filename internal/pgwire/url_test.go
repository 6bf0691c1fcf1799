package pgwire

import (
	"net/url"
	"strings"
	"testing"
)

func TestSocketAndCheckURL(t *testing.T) {
	for _, c := range []struct {
		url, socket, err string
	}{
		{"postgres://h/app?sslmode=require", "", ""},
		{"postgres:///app?host=/run/pg", "/run/pg/.s.PGSQL.5432", ""},
		{"postgresql:///app?host=/run/pg&port=5433", "/run/pg/.s.PGSQL.5433", ""},
		{"postgres://:5434/app?host=/run/pg", "/run/pg/.s.PGSQL.5434", ""},
		{"postgres://h/app?host=/run/pg", "/run/pg/.s.PGSQL.5432", `names the host "h" and the socket directory`},
		{"postgres://h/app?host=db", "", "is not one Unix socket directory"},
		{"postgres://h/app?port=5433", "", "the port of a socket directory"},
		{"postgres://h/app?sslmode=on", "", `sslmode "on" is not one of libpq's`},
		{"postgres://h/app?target_session_attrs=read-write", "", "takes a login"},
		{"postgres://u:p@h/app?target_session_attrs=read-write", "", ""},
		{"postgres://h/a/b", "", "is more than a database name"},
		{"postgres://h/app?x=1", "", `the parameter "x"`},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := Socket(u); got != c.socket {
			t.Errorf("Socket(%s) = %q, want %q", c.url, got, c.socket)
		}
		err = CheckURL(u)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("CheckURL(%s) = %v, want %q", c.url, err, c.err)
		}
	}
}
