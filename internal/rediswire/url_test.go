package rediswire

import (
	"net/url"
	"strings"
	"testing"
)

func TestSocketAndCheckURL(t *testing.T) {
	for _, c := range []struct {
		url, socket, err string
	}{
		{"redis://h:6379/2", "", ""},
		{"redis://h/x", "", "is not a database number"},
		{"redis://h/?db=1", "", "has a query (want redis://[[USER]:PASSWORD@]HOST[:PORT][/DB])"},
		{"unix:///run/redis.sock?db=3", "/run/redis.sock", ""},
		{"UNIX:///run/redis.sock", "/run/redis.sock", ""},
		{"redis+socket://:pw@/run/r.sock", "/run/r.sock", ""},
		{"unix://h/run/r.sock", "/run/r.sock", `names the host "h"`},
		{"unix:///", "/", "names no socket path (want unix:///PATH/TO/redis.sock"},
		{"unix:///r.sock?db=-1", "/r.sock", `db "-1" is not a database number`},
		{"unix:///r.sock?x=1", "/r.sock", `the parameter "x"`},
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
