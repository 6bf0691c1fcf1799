package pgwire

import (
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
)

// The URL: its own rules, which the scheme table's postgres row applies
// after the ones every database's URL shares (internal/scheme: no
// fragment, no control character in the database's name, with URLForm in
// the error), libpq's sslmode values, and the Unix socket a URL names.

// DefaultPort is the port of a URL that names none (the scheme table's
// row says it), and of a socket directory's socket.
const DefaultPort = "5432"

// SSLModes are libpq's sslmode values, and whether each asks the server
// for TLS first (an SSLRequest) and insists on it. allow and disable speak
// in clear (libpq's allow tries clear first); prefer asks and goes on in
// clear when the server says N; require, verify-ca and verify-full insist.
// Built on first use: a package-level map literal is built at every start,
// probe included.
var SSLModes = sync.OnceValue(func() map[string]struct{ Ask, Insist bool } {
	return map[string]struct{ Ask, Insist bool }{
		"disable": {}, "allow": {}, "prefer": {Ask: true},
		"require": {Ask: true, Insist: true}, "verify-ca": {Ask: true, Insist: true}, "verify-full": {Ask: true, Insist: true},
	}
})

// Socket is the Unix socket a libpq URL names with host=/DIR
// (postgres:///DB?host=/var/run/postgresql): DIR/.s.PGSQL.PORT, the port
// the URL's or its port parameter, 5432 by default; "" for a TCP host.
func Socket(u *url.URL) string {
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
		port = DefaultPort
	}
	return path.Join(dir, ".s.PGSQL."+port)
}

// URLForm is the URL form of a postgres:// probe.
func URLForm(u *url.URL) string {
	scheme := u.Scheme
	return scheme + "://[[USER]:PASSWORD@]HOST[:PORT][/DB][?sslmode=MODE&target_session_attrs=any|read-write&connect_timeout=SECONDS] or " + scheme + ":///DB?host=/SOCKET/DIR"
}

// CheckURL holds a postgres:// URL to what the probe sends:
// credentials, a database name as the path, an sslmode of libpq's and
// target_session_attrs (read-write only with a password: it takes a
// login), nothing else.
func CheckURL(u *url.URL) error {
	form := URLForm(u)
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fmt.Errorf("%s URL's query: %v (want %s)", u.Scheme, err, form)
	}
	for k, vs := range q {
		switch k {
		case "sslmode":
			if _, ok := SSLModes()[vs[0]]; len(vs) != 1 || !ok {
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
