package dbprobe

// The PostgreSQL login (postgres:// with a password): the application's own
// credentials checked as psql checks them, through pgx's pgconn on the
// connection the run dialled (and made TLS, for sslmode=require): the
// startup message, the authentication the server asks for (SCRAM, MD5,
// cleartext), an empty query, Terminate. Every ErrorResponse on the way is
// the answer (28P01 a wrong password, 3D000 no such database, 53300 no
// slot left for an ordinary user, 57P03).

import (
	"context"
	"errors"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/healthctl/healthctl/internal/pgwire"
	"github.com/healthctl/healthctl/internal/probe/streamprobe"
)

// maxLoginMessage is the longest message a login reads: an
// ErrorResponse, a SASL step, a parameter status, an empty query's answer
// are a few hundred bytes.
const maxLoginMessage = 64 << 10

// login logs in as the URL's user with its password over cv's connection
// to hop (connected, TLS done) and runs an empty query. A server's ErrorResponse
// is returned in the answer (err nil); any other failure as err.
func (x *postgresExchange) login(ctx context.Context, hop *url.URL, password string) (pgwire.Answer, error) {
	cv, o := &x.cv, x.cv.P.Opts
	user, db := pgwire.UserDB(o.URL)
	// ParseConfig is the one way to a config pgconn connects with; what
	// it read from the environment is replaced below: the URL decides.
	cfg, err := pgconn.ParseConfig("sslmode=disable")
	if err != nil {
		return pgwire.Answer{}, err
	}
	// The host and port dialled, as pgconn's errors name them (it
	// neither resolves nor dials them: see LookupFunc and DialFunc).
	cfg.Host, cfg.Port = hop.Hostname(), 5432
	port := hop.Port()
	if sock := pgwire.Socket(hop); sock != "" {
		// The socket's directory, as libpq names it.
		cfg.Host, port = path.Dir(sock), strings.TrimPrefix(path.Base(sock), ".s.PGSQL.")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err == nil {
		cfg.Port = uint16(n)
	}
	cfg.User, cfg.Password, cfg.Database = user, password, db
	cfg.RuntimeParams = map[string]string{"application_name": "healthctl"}
	cfg.TLSConfig, cfg.Fallbacks, cfg.ConnectTimeout = nil, nil, 0
	cfg.ValidateConnect, cfg.AfterConnect = nil, nil
	// A server's message is read whole: bound it (pgconn's default is
	// none), as pgwire bounds the startup's answer.
	cfg.MaxProtocolMessageBodyLen = maxLoginMessage
	wrapped := &pgConn{Conn: cv.Conn, cv: cv}
	var once sync.Once
	cfg.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
	cfg.DialFunc = func(context.Context, string, string) (net.Conn, error) {
		// The run's connection, dialled in its connect window (and
		// made TLS): pgconn never dials or resolves.
		var c net.Conn
		once.Do(func() { c = wrapped })
		if c == nil {
			return nil, errors.New("a second connection was asked for")
		}
		return c, nil
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return answerOf(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "").ReadAll(); err != nil {
		return answerOf(err)
	}
	a := pgwire.Answer{Auth: true, LoggedIn: true}
	if x.readWrite {
		ro, err := readOnly(ctx, conn)
		if err != nil {
			return answerOf(err)
		}
		a.ReadOnly = ro
	}
	return a, nil
}

// readOnly is libpq's test for target_session_attrs=read-write: what the
// server reported at the start of the session (PostgreSQL 14 and later:
// in_hot_standby, default_transaction_read_only), else SHOW
// transaction_read_only.
func readOnly(ctx context.Context, conn *pgconn.PgConn) (bool, error) {
	if hs := conn.ParameterStatus("in_hot_standby"); hs != "" {
		return hs == "on" || conn.ParameterStatus("default_transaction_read_only") == "on", nil
	}
	res, err := conn.Exec(ctx, "SHOW transaction_read_only").ReadAll()
	if err != nil {
		return false, err
	}
	return len(res) == 1 && len(res[0].Rows) == 1 && len(res[0].Rows[0]) == 1 && string(res[0].Rows[0][0]) == "on", nil
}

// answerOf turns an ErrorResponse into the answer; any other error stays,
// without pgconn's "failed to connect to `user=… database=…`" around it
// (the result names both).
func answerOf(err error) (pgwire.Answer, error) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pgwire.Answer{Error: &pgwire.ErrorFields{Severity: pe.Severity, Code: pe.Code, Message: pe.Message, Detail: pe.Detail}}, nil
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && ce.Unwrap() != nil {
		err = ce.Unwrap()
	}
	return pgwire.Answer{}, err
}

// pgConn is the run's connection as pgconn uses it: its first write opens
// the read window, its first byte read is ttfb.
type pgConn struct {
	net.Conn
	cv            *streamprobe.Conversation
	wrote, readOK bool
}

func (c *pgConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err == nil && !c.wrote {
		c.wrote = true
		c.cv.ArmRead()
	}
	return n, err
}

func (c *pgConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.readOK {
		c.readOK = true
		c.cv.GotFirstByte()
	}
	return n, err
}
