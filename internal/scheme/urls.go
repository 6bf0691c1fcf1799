package scheme

import (
	"fmt"
	"net/url"
	"strings"
)

// The URL rules the rows share. A row's own URL rules (Scheme.check) and
// the Unix socket its URL may name (Scheme.socket) are its wire package's
// (rediswire.CheckURL, pgwire.Socket, ...); internal/target applies them
// and the exchanges read them.

// databaseURL is the check of a database's row (redis://, postgres://,
// mysql://, amqp://): what every such probe refuses (checkDatabaseURL,
// form naming the URL's shape in the error), then the kind's own rules.
func databaseURL(form func(*url.URL) string, check func(*url.URL) error) func(*url.URL) error {
	return func(u *url.URL) error {
		if err := checkDatabaseURL(u, form(u)); err != nil {
			return err
		}
		return check(u)
	}
}

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
