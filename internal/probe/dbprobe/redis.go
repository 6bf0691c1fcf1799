package dbprobe

// The Redis exchange (redis://, rediss://): one PING, after AUTH when the
// URL carries credentials and SELECT when its path names a database, as
// `redis-cli -u URL ping` does, then INFO server and CLUSTER INFO (a
// Sentinel, a cluster whose state is fail), pipelined on one connection.
// No driver: the bytes are a few RESP arrays and one reply each
// (internal/rediswire).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/probe/streamprobe"
	"github.com/healthctl/healthctl/internal/rediswire"
)

type redisExchange struct {
	cv      streamprobe.Conversation
	cmds    []rediswire.Command
	replies []rediswire.Reply
	notRESP string
}

func NewRedis(_ context.Context, p *session.Probe) (session.Exchange, error) {
	return &redisExchange{cv: streamprobe.Conversation{P: p}}, nil
}

func (r *redisExchange) Answered() bool { return r.cv.First }

func (r *redisExchange) Close() { r.cv.Close() }

func (r *redisExchange) Run(ctx context.Context) error {
	cv, o := &r.cv, r.cv.P.Opts
	if err := cv.Open(ctx); err != nil {
		return err
	}
	req, cmds := rediswire.Request(wireURL(o.URL))
	r.cmds = cmds
	if err := cv.Send(req); err != nil {
		return err
	}
	if err := cv.FirstByte(); err != nil {
		return noReply(err)
	}
	for _, cmd := range cmds {
		if cmd == rediswire.Info || cmd == rediswire.ClusterInfo {
			rep, err := rediswire.ReadBulk(cv.BR)
			var nr *rediswire.NotRESPError
			if errors.As(err, &nr) || errors.Is(err, rediswire.ErrNoReply) {
				// PING was answered; a server that says no more
				// (an older one, a proxy in front) is judged by it.
				break
			}
			if err != nil {
				return err
			}
			r.replies = append(r.replies, rep)
			continue
		}
		rep, err := rediswire.Read(cv.BR)
		var nr *rediswire.NotRESPError
		if errors.As(err, &nr) {
			r.notRESP = nr.Seen
			break
		}
		if err != nil {
			return noReply(err)
		}
		r.replies = append(r.replies, rep)
		if rep.Type != '+' && rep.Type != '-' {
			// Not an answer to any of these commands: it decides.
			break
		}
	}
	cv.Done()
	return nil
}

// noReply names a connection that ended before a whole reply.
func noReply(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %w", rediswire.ErrNoReply, err)
	}
	return err
}

func (r *redisExchange) Describe(err error, _ time.Time, _ *result.Result, obs *classify.Observation, _ *classify.Facts) {
	a := &rediswire.Answer{}
	obs.Answer = a
	if err != nil || (!r.cv.First && r.notRESP == "") {
		return
	}
	red := r.cv.P.Opts.Redactor.String
	a.Read = true
	if r.notRESP != "" {
		a.NotRESP = true
		a.Seen = red(r.notRESP)
		a.Quoted = fmt.Sprintf("%q", a.Seen)
	}
	for i, rep := range r.replies {
		switch r.cmds[i] {
		case rediswire.Info:
			if m := rediswire.Field(rep.Text, "redis_mode"); rep.Type == '$' && m != "" && m != "standalone" {
				a.Mode = red(m)
			}
			continue
		case rediswire.ClusterInfo:
			if st := rediswire.Field(rep.Text, "cluster_state"); rep.Type == '$' && st != "" {
				a.ClusterState = red(st)
				a.ClusterSlotsOK = red(rediswire.Field(rep.Text, "cluster_slots_ok"))
			}
			continue
		}
		text := red(rep.String())
		switch r.cmds[i] {
		case rediswire.Auth:
			a.Auth = text
			a.Before = append(a.Before, rediswire.Said{Command: "AUTH", Reply: text})
		case rediswire.Select:
			a.Select = text
			a.Before = append(a.Before, rediswire.Said{Command: "SELECT", Reply: text})
		case rediswire.Ping:
			a.Ping = text
		}
		if rep.Type != '+' && rep.Type != '-' {
			// The reply that stopped the reading stands for PING's.
			a.Ping = text
			a.Quoted = fmt.Sprintf("%q", text)
		}
	}
	if p := a.Ping; !a.NotRESP && a.Quoted == "" && p != "+PONG" && !strings.HasPrefix(p, "-") {
		a.Quoted = fmt.Sprintf("%q in answer to PING", p)
	}
}

// wireURL is u as the commands read it: a socket URL's database is its db
// parameter (its path is the socket's).
func wireURL(u *url.URL) *url.URL {
	if rediswire.Socket(u) == "" {
		return u
	}
	w := *u
	w.Path = "/" + u.Query().Get("db")
	return &w
}
