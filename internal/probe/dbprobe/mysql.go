package dbprobe

// The MySQL/MariaDB exchange (mysql://, mariadb://): the server speaks
// first, then the probe logs in with the URL's user, password and database
// and sends COM_PING, as the mysql client would. Without a password in the
// URL it logs in with none, as mysqladmin ping does: an access denied is a
// server that accepts connections (not logged in). A probe that left after
// the greeting alone would be a handshake error to the server, and
// max_connect_errors of them block the prober's host (HAProxy's mysql-check
// warns of the same). The ERR packet a server sends instead of its
// greeting (too many connections, host blocked, shutting down) is the
// answer. No driver: go-sql-driver/mysql added 5% to a probe's start-up
// (docs/kinds.md); the bytes are internal/mysqlwire's.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/mysqlwire"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/probe/streamprobe"
)

type mysqlExchange struct {
	cv       streamprobe.Conversation
	greeting *mysqlwire.Greeting
	refused  *mysqlwire.ErrPacket
	loggedIn bool
	seen     string
	got      bool
}

func NewMySQL(_ context.Context, p *session.Probe) (session.Exchange, error) {
	return &mysqlExchange{cv: streamprobe.Conversation{P: p}}, nil
}

func (x *mysqlExchange) Answered() bool { return x.cv.First }

func (x *mysqlExchange) Close() { x.cv.Close() }

func (x *mysqlExchange) Run(ctx context.Context) error {
	cv, o := &x.cv, x.cv.P.Opts
	if err := cv.Open(ctx); err != nil {
		return err
	}
	// The server speaks first: the read window opens on the connection.
	cv.ArmRead()
	if err := cv.FirstByte(); err != nil {
		return fmt.Errorf("%w: %w", mysqlwire.ErrNoAnswer, err)
	}
	g, refused, err := mysqlwire.ReadGreeting(cv.BR)
	if x.notMySQL(err) || err != nil {
		return x.ended(err)
	}
	x.greeting, x.refused, x.got = g, refused, true
	if g == nil {
		cv.Done()
		return nil
	}
	pw, _ := o.URL.User.Password()
	user, db := mysqlwire.UserDB(o.URL)
	if user == "" {
		user = "healthctl"
	}
	refused, err = mysqlwire.Login(cv.BR, cv.Conn, g, user, pw, db)
	if x.notMySQL(err) || err != nil {
		return x.ended(err)
	}
	if refused == nil && pw != "" {
		refused, err = mysqlwire.Ping(cv.BR, cv.Conn)
		if x.notMySQL(err) || err != nil {
			return x.ended(err)
		}
		x.loggedIn = refused == nil
	}
	if refused == nil {
		cv.Conn.Write(mysqlwire.Quit)
	}
	x.refused = refused
	cv.Done()
	return nil
}

// notMySQL keeps what came when it was not MySQL: an answer, not an error.
func (x *mysqlExchange) notMySQL(err error) bool {
	var nm *mysqlwire.NotMySQLError
	if errors.As(err, &nm) {
		x.seen, x.got = nm.Seen, true
		x.cv.Done()
		return true
	}
	return false
}

// ended is the error that ended the exchange (nil once it was not MySQL).
func (x *mysqlExchange) ended(err error) error {
	if x.seen != "" {
		return nil
	}
	return err
}

func (x *mysqlExchange) Describe(err error, _ time.Time, _ *result.Result, obs *classify.Observation, _ *classify.Facts) {
	red := x.cv.P.Opts.Redactor.String
	user, db := mysqlwire.UserDB(x.cv.P.Opts.URL)
	a := &mysqlwire.Reply{User: red(user), Database: red(db)}
	obs.Answer = a
	if err != nil || !x.got {
		return
	}
	_, a.Login = x.cv.P.Opts.URL.User.Password()
	a.Read, a.LoggedIn = true, x.loggedIn
	if x.seen != "" {
		a.Seen = red(x.seen)
		return
	}
	if g := x.greeting; g != nil {
		a.Version, a.Greeted = red(g.Version), true
	}
	if e := x.refused; e != nil {
		a.ErrorCode, a.SQLState, a.Message = int(e.Code), red(e.State), red(e.Message)
	}
}
