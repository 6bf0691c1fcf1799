package amqpwire

import (
	"fmt"
	"net/url"
	"strings"
)

// The URL.

// URLForm is the URL form of an amqp:// or amqps:// probe.
func URLForm(u *url.URL) string {
	return u.Scheme + "://[USER[:PASSWORD]@]HOST[:PORT][/VHOST]"
}

// CheckURL holds an amqp:// or amqps:// URL to what the probe sends:
// credentials, a virtual host as the path, no query. The scheme table's
// rows apply it after the rules every database's URL shares
// (internal/scheme: no fragment, no control character in the path).
func CheckURL(u *url.URL) error {
	form := URLForm(u)
	if u.RawQuery != "" || u.ForceQuery {
		return fmt.Errorf("%s URL has a query, which the probe does not use (want %s)", u.Scheme, form)
	}
	return CheckPath(u)
}

// Login is what an amqp:// URL says of credentials: ok when it carries
// any (a user, with or without a password), as amqp091-go reads it. A URL
// without them is probed without logging in.
func Login(u *url.URL) (user, password string, ok bool) {
	if u.User == nil {
		return "", "", false
	}
	password, _ = u.User.Password()
	return u.User.Username(), password, true
}

// Vhost is the virtual host a URL names, as the clients read it
// (amqp091-go's ParseURI, pika's URLParameters): no path, or a lone "/",
// is the default vhost "/"; otherwise the path after its first "/",
// percent-decoded (so the default one, named, is /%2F too).
func Vhost(u *url.URL) string {
	if len(u.Path) <= 1 {
		return "/"
	}
	return strings.TrimPrefix(u.Path, "/")
}

// CheckPath refuses a path of more than one segment: a "/" inside a
// vhost's name is written %2F.
func CheckPath(u *url.URL) error {
	if strings.Contains(strings.TrimPrefix(u.EscapedPath(), "/"), "/") {
		return fmt.Errorf("%s URL's path %q is more than a virtual host (a / in its name is written %%2F; want %s://[USER[:PASSWORD]@]HOST[:PORT][/VHOST])", u.Scheme, u.EscapedPath(), u.Scheme)
	}
	if len(Vhost(u)) > 255 {
		return fmt.Errorf("%s URL's virtual host is longer than 255 bytes", u.Scheme)
	}
	return nil
}
