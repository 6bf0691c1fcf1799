package dbprobe

// The PostgreSQL exchange (postgres://, postgresql://). With a password in
// the URL, what psql does: a login with it and an empty query, through
// pgx's pgconn (pglogin.go): a pass means the application's credentials
// work. Without one, what pg_isready does: a startup message for the URL's
// user and database; the first authentication request (or
// AuthenticationOk) means the server accepts connections (not logged in).
// An ErrorResponse says why not (57P03 starting up, shutting down, in
// recovery; 53300 no slot left; 28P01 and 28000 refused credentials, 3D000
// no such database). sslmode=require asks for TLS first (SSLRequest) and
// goes through the shared TLS capture; the startup bytes are
// internal/pgwire's.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/pgwire"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/probe/streamprobe"
	"github.com/healthctl/healthctl/internal/scheme"
)

type postgresExchange struct {
	cv streamprobe.Conversation
	// ssl: an SSLRequest is sent (sslmode prefer and stricter); insist:
	// N to it fails the probe (require and stricter; prefer goes on in
	// clear). readWrite: target_session_attrs=read-write.
	ssl, insist, readWrite bool
	// tlsFailed: the last attempt's handshake failed (sslmode=prefer
	// tries again in clear).
	tlsFailed bool
	answer    pgwire.Answer
	got       bool
	seen      string
}

func NewPostgres(_ context.Context, p *session.Probe) (session.Exchange, error) {
	q := p.Opts.URL.Query()
	m := pgwire.SSLModes()[q.Get("sslmode")]
	x := &postgresExchange{cv: streamprobe.Conversation{P: p}, ssl: m.Ask, insist: m.Insist,
		readWrite: q.Get("target_session_attrs") == "read-write"}
	if pgwire.Socket(p.Opts.URL) != "" {
		// libpq asks for no TLS over a Unix socket, whatever sslmode
		// says.
		x.ssl, x.insist = false, false
	}
	if d := connectTimeout(q.Get("connect_timeout")); d > 0 && d < p.Opts.ConnectTimeout {
		// libpq's connect_timeout, when it is the shorter: the connect
		// window, named after it when it closes.
		x.cv.ConnectTimeout = d
		p.ConnWin.Cause = session.WindowError{Flag: "the URL's connect_timeout", Limit: d}
	}
	return x, nil
}

// connectTimeout is a connect_timeout parameter as libpq reads it: whole
// seconds, 1 taken as 2 (its minimum), 0 or none as no limit of its own.
func connectTimeout(v string) time.Duration {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(max(n, 2)) * time.Second
}

func (x *postgresExchange) Answered() bool { return x.cv.First }

func (x *postgresExchange) Close() { x.cv.Close() }

// Run tries the URL's hosts in order, as libpq does: the next one when a
// host cannot be connected to (refused, unreachable, no such name), when
// its connect or read window closes (libpq's connect_timeout is per host:
// each host has windows of its own, --max-time bounds them all) or, with
// target_session_attrs=read-write, when its session is read-only. The
// last host tried decides; its windows end the probe.
func (x *postgresExchange) Run(ctx context.Context) error {
	p := x.cv.P
	hosts := postgresHosts(p.Opts.URL)
	ssl, insist := x.ssl, x.insist
	for i, hop := range hosts {
		x.ssl, x.insist = ssl, insist
		if i == len(hosts)-1 {
			err := x.tryHost(ctx, hop)
			if err == nil {
				x.cv.Done()
			}
			return err
		}
		hctx, cancel := context.WithCancelCause(ctx)
		p.Mu.Lock()
		p.HopEnd, p.HopWindow = cancel, nil
		p.Mu.Unlock()
		err := x.tryHost(hctx, hop)
		p.Mu.Lock()
		p.HopEnd = nil
		// Closed by its window, or by the deadline the window set a
		// moment before the window's timer ran (an answer read as the
		// window closed stands).
		now := time.Now()
		closed := err != nil && (p.HopWindow != nil || overdue(&p.ConnWin, now) || overdue(&p.ReadWin, now))
		p.Disarm(&p.ConnWin)
		p.Disarm(&p.ReadWin)
		p.Mu.Unlock()
		cancel(nil)
		if x.next(ctx, err, closed) {
			continue
		}
		if err == nil {
			x.cv.Done()
		}
		return err
	}
	return nil
}

// tryHost is one host's attempt, and libpq's second one on the same host
// for sslmode=prefer and allow (pgx's pgconn makes the same): prefer, when
// the handshake fails or the server refuses the session over TLS, tries
// again in clear; allow, when the server refuses it in clear, tries again
// over TLS. A refusal that the other way cannot change ends it, as pgconn
// stops at it: a wrong password (28P01), no such database (3D000), no
// CONNECT privilege (42501).
func (x *postgresExchange) tryHost(ctx context.Context, hop *url.URL) error {
	x.tlsFailed = false
	err := x.runHost(ctx, hop)
	if ctx.Err() != nil {
		return err
	}
	refused := err == nil && x.got && x.answer.Error != nil && !finalRefusal(x.answer.Error.Code)
	switch mode := x.cv.P.Opts.URL.Query().Get("sslmode"); {
	case mode == "prefer" && x.ssl && (x.tlsFailed || refused):
		x.ssl = false
	case mode == "allow" && !x.ssl && refused && pgwire.Socket(hop) == "":
		x.ssl, x.insist = true, true
	default:
		return err
	}
	x.reset()
	p := x.cv.P
	p.Mu.Lock()
	p.TLSState, p.TLSUnverified = nil, ""
	p.Mu.Unlock()
	return x.runHost(ctx, hop)
}

// overdue says w is armed and due at now (p.Mu held).
func overdue(w *session.Window, now time.Time) bool { return w.Active && !w.Due.After(now) }

// finalRefusal says code is a SQLSTATE after which pgconn tries no other
// way to the same server (nor another host). This file's tables are code,
// not map literals: a package-level map is built at every start.
func finalRefusal(code string) bool { return code == "28P01" || code == "3D000" || code == "42501" }

// next says whether a host's attempt that ended with err (nil: it
// answered; closed: its window closed) moves on to the next host, and
// readies the exchange for it.
func (x *postgresExchange) next(ctx context.Context, err error, closed bool) bool {
	p := x.cv.P
	p.Mu.Lock()
	stopped := p.Stopped
	p.Mu.Unlock()
	switch {
	case stopped || ctx.Err() != nil:
		return false
	case closed:
		// Its connect or read window closed: libpq's connect_timeout.
	case err != nil && x.cv.Conn == nil:
		// The dial failed: the host is not there.
	case err == nil && x.answer.ReadOnly:
	default:
		return false
	}
	x.reset()
	return true
}

// reset readies the exchange for another connection: the last one closed,
// its answer and read window gone.
func (x *postgresExchange) reset() {
	p := x.cv.P
	x.cv.Close()
	x.cv.Conn, x.cv.BR, x.cv.First = nil, nil, false
	x.answer, x.got, x.seen = pgwire.Answer{}, false, ""
	p.Mu.Lock()
	p.Disarm(&p.ReadWin)
	p.Mu.Unlock()
}

// startTLS is the handshake after the server's S, verifying what the URL's
// sslmode asks, as libpq does: verify-full the chain and the name (as
// https:// does), verify-ca the chain only; prefer and require nothing —
// the result says the chain was not verified and why — unless --cacert
// names roots (libpq's require with a root certificate is verify-ca).
// --insecure turns every check off, as everywhere.
func (x *postgresExchange) startTLS(ctx context.Context) error {
	cv, p, o := &x.cv, x.cv.P, x.cv.P.Opts
	mode := o.URL.Query().Get("sslmode")
	tc := p.TLSConfig()
	if tc.ServerName == "" {
		p.Mu.Lock()
		tc.ServerName = p.ServerName
		p.Mu.Unlock()
	}
	if o.TLSConfig == nil || !o.TLSConfig.InsecureSkipVerify {
		roots := o.TLSConfig != nil && o.TLSConfig.RootCAs != nil
		switch {
		case mode == "verify-full":
		case mode == "verify-ca" || roots:
			// The chain and its staple, not the name.
			tc.VerifyConnection = func(cs tls.ConnectionState) error { return p.VerifyAgainst(cs, "") }
		default:
			tc.VerifyConnection = p.KeepState
			p.Mu.Lock()
			p.TLSUnverified = "sslmode=" + mode
			p.Mu.Unlock()
		}
	}
	p.SetStage(classify.StageTLS)
	conn := tls.Client(cv.Conn, tc)
	cv.Conn = conn
	return streamprobe.Handshake(p, ctx, conn, nil)
}

// postgresHosts are the hosts a libpq URL names (h1:p1,h2:p2), each as
// the URL with that one host.
func postgresHosts(u *url.URL) []*url.URL {
	if !strings.Contains(u.Host, ",") {
		return []*url.URL{u}
	}
	var hops []*url.URL
	for h := range strings.SplitSeq(u.Host, ",") {
		hop := *u
		hop.Host = h
		hops = append(hops, &hop)
	}
	return hops
}

// runHost is one host's attempt: connect, TLS as sslmode says, then the
// login or the startup message; the answer is kept, done() left to run.
func (x *postgresExchange) runHost(ctx context.Context, hop *url.URL) error {
	cv, p, o := &x.cv, x.cv.P, x.cv.P.Opts
	if err := cv.ConnectTo(ctx, hop, scheme.DefaultPort(o.URL.Scheme)); err != nil {
		return err
	}
	if x.ssl {
		p.SetStage(classify.StageTLS)
		if _, err := cv.Conn.Write(pgwire.SSLRequest); err != nil {
			return err
		}
		var b [1]byte
		if _, err := io.ReadFull(cv.Conn, b[:]); err != nil {
			return err
		}
		switch b[0] {
		case 'S':
			if err := x.startTLS(ctx); err != nil {
				x.tlsFailed = true
				return err
			}
		case 'N':
			if x.insist {
				return pgwire.ErrNoSSL
			}
			// prefer: the server has no TLS, go on in clear.
			x.ssl = false
		default:
			x.seen = fmt.Sprintf("%q in answer to the SSLRequest", b[:])
			x.got = true
			return nil
		}
	}
	cv.Connected()
	if pw, ok := o.URL.User.Password(); ok {
		a, err := x.login(ctx, hop, pw)
		if err != nil {
			return err
		}
		x.answer, x.got = a, true
		return nil
	}
	if err := cv.Send(pgwire.Startup(pgwire.UserDB(o.URL))); err != nil {
		return err
	}
	if err := cv.FirstByte(); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: %w", pgwire.ErrNoAnswer, err)
		}
		return err
	}
	a, err := pgwire.Read(cv.BR)
	var np *pgwire.NotPostgresError
	switch {
	case errors.As(err, &np):
		x.seen = fmt.Sprintf("%q", np.Seen)
	case err != nil:
		return err
	}
	x.answer, x.got = a, true
	if a.Auth && a.AuthCode == 0 {
		// Trusted: a session began, ended politely. An authentication
		// request is left by closing, as pg_isready's libpq leaves it:
		// the server logs nothing for an EOF there (a Terminate it
		// would log as an unexpected message).
		cv.Conn.Write(pgwire.Terminate)
	}
	return nil
}

// authName is an authentication request's name, by code ("" for a code
// it does not know).
func authName(code uint32) string {
	switch code {
	case 0:
		return "ok"
	case 2:
		return "kerberos"
	case 3:
		return "password"
	case 5:
		return "md5"
	case 7:
		return "gss"
	case 9:
		return "sspi"
	case 10:
		return "sasl"
	}
	return ""
}

func (x *postgresExchange) Describe(err error, _ time.Time, _ *result.Result, obs *classify.Observation, _ *classify.Facts) {
	red := x.cv.P.Opts.Redactor.String
	user, db := pgwire.UserDB(x.cv.P.Opts.URL)
	a := &pgwire.Reply{User: red(user), Database: red(db), SSL: x.ssl}
	obs.Answer = a
	if err != nil || !x.got {
		return
	}
	_, a.Login = x.cv.P.Opts.URL.User.Password()
	a.Read = true
	switch {
	case x.seen != "":
		a.Seen = red(x.seen)
	case x.answer.LoggedIn:
		a.LoggedIn, a.ReadOnly = true, x.answer.ReadOnly
	case x.answer.Auth:
		a.Auth = authName(x.answer.AuthCode)
		if a.Auth == "" {
			a.Auth = fmt.Sprint(x.answer.AuthCode)
		}
	case x.answer.Error != nil:
		e := x.answer.Error
		a.SQLState, a.Severity, a.Message, a.Detail = e.Code, e.Severity, red(e.Message), red(e.Detail)
	}
}
