package rediswire

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// The URL: its own rules, which the scheme table's redis rows apply after
// the ones every database's URL shares (internal/scheme: no fragment, no
// control character in the database's name, with URLForm in the error),
// and the Unix socket a socket URL names.

// socketSchemes are the names of Redis over its Unix socket: unix://
// (go-redis, redis-py, redis-rb) and redis+socket:// (Celery, kombu).
// redis-cli's -u takes neither (its -s takes the path).
var socketSchemes = [...]string{"unix", "redis+socket"}

// Socket is the socket path of a unix:///PATH URL, "" for a
// redis:// one.
func Socket(u *url.URL) string {
	if isSocketScheme(u.Scheme) {
		return u.Path
	}
	return ""
}

// URLForm is the shape of u's kind of URL, for the errors that refuse
// another: a socket URL's or a redis:// one's.
func URLForm(u *url.URL) string {
	if isSocketScheme(u.Scheme) {
		return u.Scheme + ":///PATH/TO/redis.sock (or " + u.Scheme + "://[USER]:PASSWORD@/PATH/TO/redis.sock)[?db=N]"
	}
	return u.Scheme + "://[[USER]:PASSWORD@]HOST[:PORT][/DB]"
}

// CheckURL holds a redis:// or rediss:// URL to what the probe sends:
// credentials, a database number as the path, no query or fragment; a
// socket URL to unix://[[USER]:PASSWORD@]/PATH[?db=N].
func CheckURL(u *url.URL) error {
	if isSocketScheme(u.Scheme) {
		return checkSocketURL(u)
	}
	form := URLForm(u)
	if u.RawQuery != "" || u.ForceQuery {
		return fmt.Errorf("%s URL has a query (want %s)", u.Scheme, form)
	}
	return CheckPath(u)
}

func isSocketScheme(scheme string) bool {
	for _, s := range socketSchemes {
		if strings.EqualFold(scheme, s) {
			return true
		}
	}
	return false
}

// checkSocketURL holds a socket URL to its form: no host, an absolute
// path, the database as db=N and nothing else in the query.
func checkSocketURL(u *url.URL) error {
	form := URLForm(u)
	switch {
	case u.Host != "":
		return fmt.Errorf("%s URL names the host %q: a Unix socket's URL names only its path (want %s)", u.Scheme, u.Host, form)
	case !strings.HasPrefix(u.Path, "/") || len(u.Path) < 2:
		return fmt.Errorf("%s URL names no socket path (want %s)", u.Scheme, form)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fmt.Errorf("%s URL's query: %v (want %s)", u.Scheme, err, form)
	}
	for k, vs := range q {
		if k != "db" || len(vs) != 1 {
			return fmt.Errorf("%s URL has the parameter %q, which the probe does not use (want %s)", u.Scheme, k, form)
		}
		if n, err := strconv.Atoi(vs[0]); err != nil || n < 0 || vs[0][0] == '+' {
			return fmt.Errorf("%s URL's db %q is not a database number (want %s)", u.Scheme, vs[0], form)
		}
	}
	return nil
}
