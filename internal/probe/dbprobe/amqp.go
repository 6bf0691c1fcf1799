package dbprobe

// The AMQP 0-9-1 exchange (amqp://, amqps://): the protocol header, then
// the server's Connection.Start. With credentials in the URL, what a
// client's connect does (amqp091-go's Dial): Start-Ok with PLAIN, Tune-Ok,
// Connection.Open for the URL's virtual host; Open-Ok is a pass, and the
// connection is closed politely (Close, Close-Ok). Without credentials,
// Connection.Start alone: the broker accepts connections (not logged in),
// as pg_isready says of PostgreSQL. A Close from the server says why not
// (403 ACCESS_REFUSED, 530 NOT_ALLOWED...) and is answered with Close-Ok.
// amqps:// does the same over the shared TLS capture. No driver: the bytes
// are a few method frames (internal/amqpwire).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/healthctl/healthctl/internal/amqpwire"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/probe/streamprobe"
)

type amqpExchange struct {
	cv     streamprobe.Conversation
	start  amqpwire.Start
	got    bool
	answer amqpwire.Answer
}

func NewAMQP(_ context.Context, p *session.Probe) (session.Exchange, error) {
	return &amqpExchange{cv: streamprobe.Conversation{P: p}}, nil
}

func (x *amqpExchange) Answered() bool { return x.cv.First }

func (x *amqpExchange) Close() { x.cv.Close() }

// goodbye bounds the wait for the server's Close-Ok once the answer is
// decided.
const goodbye = time.Second

func (x *amqpExchange) Run(ctx context.Context) error {
	cv, o := &x.cv, x.cv.P.Opts
	if err := x.talk(ctx); err != nil || !x.got {
		return err
	}
	cv.Done()
	if x.answer.LoggedIn {
		// Leave as a client does: Close, then the server's Close-Ok
		// (not waited for past a moment: the answer is decided).
		cv.Conn.SetReadDeadline(time.Now().Add(min(o.ReadTimeout, goodbye)))
		if x.write(amqpwire.CloseFrame(200, "Goodbye")) == nil {
			x.read()
		}
	}
	return nil
}

// talk is the exchange up to its answer: the server's Start, and with
// credentials the login and Open.
func (x *amqpExchange) talk(ctx context.Context) error {
	cv, o := &x.cv, x.cv.P.Opts
	if err := cv.Open(ctx); err != nil {
		return err
	}
	if err := cv.Send(amqpwire.Header); err != nil {
		return err
	}
	if err := cv.FirstByte(); err != nil {
		return err
	}
	a := &x.answer
	m, err := x.read()
	if err != nil || m == nil {
		return err
	}
	if !m.Is(amqpwire.MethodStart) {
		return x.unexpected(*m, "the protocol header")
	}
	x.got = true
	if x.start, err = amqpwire.ParseStart(m.Args); err != nil {
		return x.notAMQP(err)
	}
	user, password, login := amqpwire.Login(o.URL)
	if !login {
		// pg_isready's question: the broker takes connections. The
		// spec lets a client leave before Start-Ok by closing.
		a.Accepting = true
		return nil
	}
	if !x.start.HasMechanism("PLAIN") {
		a.NoPlain = true
		return nil
	}
	if err := x.write(amqpwire.StartOk(o.UserAgent, user, password)); err != nil {
		return err
	}
	m, err = x.read()
	if err != nil || m == nil {
		return x.closedAfter(err, amqpwire.MethodStartOk)
	}
	if !m.Is(amqpwire.MethodTune) {
		return x.unexpected(*m, amqpwire.MethodName(amqpwire.ClassConnection, amqpwire.MethodStartOk))
	}
	tune, err := amqpwire.ParseTune(m.Args)
	if err != nil {
		return x.notAMQP(err)
	}
	if tune.FrameMax == 0 {
		tune.FrameMax = amqpwire.MaxFrame
	}
	if err := x.write(append(amqpwire.TuneOk(tune), amqpwire.Open(amqpwire.Vhost(o.URL))...)); err != nil {
		return err
	}
	m, err = x.read()
	if err != nil || m == nil {
		return x.closedAfter(err, amqpwire.MethodOpen)
	}
	if !m.Is(amqpwire.MethodOpenOk) {
		return x.unexpected(*m, amqpwire.MethodName(amqpwire.ClassConnection, amqpwire.MethodOpen))
	}
	a.LoggedIn = true
	return nil
}

// read reads the next method frame on channel 0, skipping heartbeats. A
// nil method with a nil error is an answer that ended the exchange (the
// server's protocol header, garbage), already recorded.
func (x *amqpExchange) read() (*amqpwire.Method, error) {
	for {
		f, err := amqpwire.ReadFrame(x.cv.BR)
		var ph *amqpwire.ProtocolHeaderError
		var na *amqpwire.NotAMQPError
		switch {
		case errors.As(err, &ph):
			x.answer.Speaks = ph.Speaks()
			x.got = true
			return nil, nil
		case errors.As(err, &na):
			x.answer.Seen = fmt.Sprintf("%q", na.Seen)
			x.got = true
			return nil, nil
		case err != nil:
			return nil, err
		}
		if f.Type == amqpwire.FrameHeartbeat {
			continue
		}
		m, err := amqpwire.ParseMethod(f)
		if err != nil {
			return nil, x.notAMQP(err)
		}
		return &m, nil
	}
}

// write sends b on the connection (the read window is open already).
func (x *amqpExchange) write(b []byte) error {
	_, err := x.cv.Conn.Write(b)
	return err
}

// unexpected is a method other than the one due after the client's: the
// server's Close is its answer (answered with Close-Ok), anything else is
// not AMQP as a broker speaks it.
func (x *amqpExchange) unexpected(m amqpwire.Method, after string) error {
	x.got = true
	if !m.Is(amqpwire.MethodClose) {
		x.answer.Seen = fmt.Sprintf("%q", m.Name()+" in answer to "+after)
		return nil
	}
	c, err := amqpwire.ParseClose(m.Args)
	if err != nil {
		return x.notAMQP(err)
	}
	x.answer.Close = &amqpwire.CloseSaid{Code: c.Code, Name: amqpwire.ReplyName(c.Code),
		Text: x.cv.P.Opts.Redactor.String(c.Text), After: after}
	x.write(amqpwire.CloseOk())
	return nil
}

// closedAfter is a read after the client's method that found no answer:
// a connection closed (EOF) is the server's answer to it, anything else
// the error.
func (x *amqpExchange) closedAfter(err error, method uint16) error {
	if err == nil || !errors.Is(err, io.EOF) && !errors.Is(err, amqpwire.ErrShort) {
		return err
	}
	x.got = true
	x.answer.ClosedAfter = amqpwire.MethodName(amqpwire.ClassConnection, method)
	return nil
}

// notAMQP records a frame that does not parse as what it says it is.
func (x *amqpExchange) notAMQP(err error) error {
	var na *amqpwire.NotAMQPError
	if errors.As(err, &na) {
		x.got = true
		x.answer.Seen = fmt.Sprintf("%q", na.Seen)
		return nil
	}
	return err
}

func (x *amqpExchange) Describe(err error, _ time.Time, _ *result.Result, obs *classify.Observation, _ *classify.Facts) {
	red := x.cv.P.Opts.Redactor.String
	user, _, _ := amqpwire.Login(x.cv.P.Opts.URL)
	a := &x.answer
	a.User, a.Vhost = red(user), red(amqpwire.Vhost(x.cv.P.Opts.URL))
	obs.Answer = a
	if err != nil || !x.got {
		return
	}
	a.Read = true
	a.Seen = red(a.Seen)
	if p := x.start.Properties; p != nil {
		a.Product, a.Version, a.ClusterName = red(p.String("product")), red(p.String("version")), red(p.String("cluster_name"))
		a.Mechanisms = red(x.start.Mechanisms)
	}
}
