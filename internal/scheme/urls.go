package scheme

import (
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/healthctl/healthctl/internal/amqpwire"
	"github.com/healthctl/healthctl/internal/dnswire"
	"github.com/healthctl/healthctl/internal/icmpwire"
	"github.com/healthctl/healthctl/internal/mysqlwire"
	"github.com/healthctl/healthctl/internal/rediswire"
)

// The URL forms of the rows that hold a URL to their own (Scheme.check),
// and the Unix socket a row's URL may name (Scheme.socket): pure rules,
// which internal/target applies and the exchanges read.

// checkDatabaseURL holds a database's URL (redis://, postgres://) to what
// every such probe refuses: a fragment, a control character in the
// database's name. form is the URL's shape, for the error.
func checkDatabaseURL(u *url.URL, form string) error {
	switch {
	case u.Fragment != "":
		return fmt.Errorf("%s URL has a fragment (want %s)", u.Scheme, form)
	case strings.ContainsFunc(u.Path, isControl):
		return fmt.Errorf("%s URL's database name has a control character", u.Scheme)
	}
	return nil
}

// isControl says r is a control character.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// socketSchemes are the names of Redis over its Unix socket: unix://
// (go-redis, redis-py, redis-rb) and redis+socket:// (Celery, kombu).
// redis-cli's -u takes neither (its -s takes the path).
var socketSchemes = [...]string{"unix", "redis+socket"}

// RedisSocket is the socket path of a unix:///PATH URL, "" for a
// redis:// one.
func RedisSocket(u *url.URL) string {
	if isSocketScheme(u.Scheme) {
		return u.Path
	}
	return ""
}

// checkRedisURL holds a redis:// or rediss:// URL to what the probe sends:
// credentials, a database number as the path, no query or fragment; a
// socket URL to unix://[[USER]:PASSWORD@]/PATH[?db=N].
func checkRedisURL(u *url.URL) error {
	if isSocketScheme(u.Scheme) {
		return checkRedisSocketURL(u)
	}
	form := u.Scheme + "://[[USER]:PASSWORD@]HOST[:PORT][/DB]"
	if err := checkDatabaseURL(u, form); err != nil {
		return err
	}
	if u.RawQuery != "" || u.ForceQuery {
		return fmt.Errorf("%s URL has a query (want %s)", u.Scheme, form)
	}
	return rediswire.CheckPath(u)
}

func isSocketScheme(scheme string) bool {
	for _, s := range socketSchemes {
		if strings.EqualFold(scheme, s) {
			return true
		}
	}
	return false
}

// checkRedisSocketURL holds a socket URL to its form: no host, an absolute
// path, the database as db=N and nothing else in the query.
func checkRedisSocketURL(u *url.URL) error {
	form := u.Scheme + ":///PATH/TO/redis.sock (or " + u.Scheme + "://[USER]:PASSWORD@/PATH/TO/redis.sock)[?db=N]"
	if err := checkDatabaseURL(u, form); err != nil {
		return err
	}
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

// SSLModes are libpq's sslmode values, and whether each asks the server
// for TLS first (an SSLRequest) and insists on it. allow and disable speak
// in clear (libpq's allow tries clear first); prefer asks and goes on in
// clear when the server says N; require, verify-ca and verify-full insist.
var SSLModes = map[string]struct{ Ask, Insist bool }{
	"disable": {}, "allow": {}, "prefer": {Ask: true},
	"require": {Ask: true, Insist: true}, "verify-ca": {Ask: true, Insist: true}, "verify-full": {Ask: true, Insist: true},
}

// PostgresSocket is the Unix socket a libpq URL names with host=/DIR
// (postgres:///DB?host=/var/run/postgresql): DIR/.s.PGSQL.PORT, the port
// the URL's or its port parameter, 5432 by default; "" for a TCP host.
func PostgresSocket(u *url.URL) string {
	q, err := url.ParseQuery(u.RawQuery)
	dir := q.Get("host")
	if err != nil || !strings.HasPrefix(dir, "/") {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = q.Get("port")
	}
	if port == "" {
		port = DefaultPort(u.Scheme)
	}
	return path.Join(dir, ".s.PGSQL."+port)
}

// postgresForm is the URL form of a postgres:// probe.
func postgresForm(scheme string) string {
	return scheme + "://[[USER]:PASSWORD@]HOST[:PORT][/DB][?sslmode=MODE&target_session_attrs=any|read-write&connect_timeout=SECONDS] or " + scheme + ":///DB?host=/SOCKET/DIR"
}

// checkPostgresURL holds a postgres:// URL to what the probe sends:
// credentials, a database name as the path, an sslmode of libpq's and
// target_session_attrs (read-write only with a password: it takes a
// login), nothing else.
func checkPostgresURL(u *url.URL) error {
	form := postgresForm(u.Scheme)
	if err := checkDatabaseURL(u, form); err != nil {
		return err
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fmt.Errorf("%s URL's query: %v (want %s)", u.Scheme, err, form)
	}
	for k, vs := range q {
		switch k {
		case "sslmode":
			if _, ok := SSLModes[vs[0]]; len(vs) != 1 || !ok {
				return fmt.Errorf("%s URL's sslmode %q is not one of libpq's: disable, allow, prefer, require, verify-ca or verify-full (want %s)", u.Scheme, strings.Join(vs, ","), form)
			}
		case "connect_timeout":
			if n, err := strconv.Atoi(vs[0]); len(vs) != 1 || err != nil || n < 0 {
				return fmt.Errorf("%s URL's connect_timeout %q is not a number of seconds (want %s)", u.Scheme, strings.Join(vs, ","), form)
			}
		case "host":
			// libpq's host parameter: here only a socket directory
			// (a TCP host is the URL's own).
			switch {
			case len(vs) != 1 || !strings.HasPrefix(vs[0], "/") || strings.Contains(vs[0], ","):
				return fmt.Errorf("%s URL's host parameter %q is not one Unix socket directory (an absolute path): a TCP host goes in the URL, %s://HOST:PORT/DB", u.Scheme, strings.Join(vs, ","), u.Scheme)
			case u.Host != "" && u.Hostname() != "":
				return fmt.Errorf("%s URL names the host %q and the socket directory %q: give one (want %s)", u.Scheme, u.Hostname(), vs[0], form)
			}
		case "port":
			if len(vs) != 1 || !validPortText(vs[0]) || u.Port() != "" || !strings.HasPrefix(q.Get("host"), "/") {
				return fmt.Errorf("%s URL's port parameter %q: the port of a socket directory (host=/DIR), once, 1 to 65535; a TCP port goes in the URL, %s://HOST:PORT/DB", u.Scheme, strings.Join(vs, ","), u.Scheme)
			}
		case "target_session_attrs":
			if len(vs) != 1 || (vs[0] != "any" && vs[0] != "read-write") {
				return fmt.Errorf("%s URL's target_session_attrs %q is not any or read-write (want %s)", u.Scheme, strings.Join(vs, ","), form)
			}
			if _, ok := u.User.Password(); vs[0] == "read-write" && !ok {
				return fmt.Errorf("%s URL asks for target_session_attrs=read-write, which takes a login: give the URL the user's password (want %s)", u.Scheme, form)
			}
		default:
			return fmt.Errorf("%s URL has the parameter %q, which the probe does not use (want %s)", u.Scheme, k, form)
		}
	}
	if strings.Contains(strings.TrimPrefix(u.Path, "/"), "/") {
		return fmt.Errorf("%s URL's path %q is more than a database name (want %s)", u.Scheme, u.Path, form)
	}
	return nil
}

// validPortText says s is a port number, 1 to 65535, in decimal digits.
func validPortText(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535 && s[0] != '+' && s[0] != '-'
}

// mysqlForm is the URL form of a mysql:// probe.
func mysqlForm(scheme string) string {
	return scheme + "://[USER[:PASSWORD]@]HOST[:PORT][/DB]"
}

// checkMySQLURL holds a mysql:// URL to what the probe sends: a user and
// password, a database name as the path, no query.
func checkMySQLURL(u *url.URL) error {
	form := mysqlForm(u.Scheme)
	if err := checkDatabaseURL(u, form); err != nil {
		return err
	}
	if u.RawQuery != "" || u.ForceQuery {
		return fmt.Errorf("%s URL has a query, which the probe does not use (want %s)", u.Scheme, form)
	}
	if err := mysqlwire.CheckPath(u); err != nil {
		return fmt.Errorf("%w (want %s)", err, form)
	}
	return nil
}

// checkAMQPURL holds an amqp:// or amqps:// URL to what the probe sends:
// credentials, a virtual host as the path, no query or fragment.
func checkAMQPURL(u *url.URL) error {
	form := u.Scheme + "://[USER[:PASSWORD]@]HOST[:PORT][/VHOST]"
	if err := checkDatabaseURL(u, form); err != nil {
		return err
	}
	if u.RawQuery != "" || u.ForceQuery {
		return fmt.Errorf("%s URL has a query, which the probe does not use (want %s)", u.Scheme, form)
	}
	return amqpwire.CheckPath(u)
}

// checkDNSURL holds a dns:// URL to its form: the server as host[:port],
// the query name as the path, the parameters dnswire reads.
func checkDNSURL(u *url.URL) error {
	_, err := dnswire.ParseURL(u)
	return err
}

// checkICMPURL holds an icmp:// URL to its form: a host, ttl= and size=.
func checkICMPURL(u *url.URL) error {
	_, err := icmpwire.ParseURL(u)
	return err
}
