package streamprobe

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

// streamExchange is tcp:// (a connect and nothing more: the kubelet's
// tcpSocket, blackbox's tcp prober) and tls:// (a connect and a TLS
// Handshake whose chain is verified: certificate checks of services that do
// not speak HTTP). Nothing is written once connected; the connection is
// closed at once. No proxy is used: a tunnel would prove only that the
// proxy connected.
type streamExchange struct {
	p    *session.Probe
	conn net.Conn
	// failed says which step of the dialogue found no line it expected.
	failed string
}

func NewStream(_ context.Context, p *session.Probe) (session.Exchange, error) {
	return &streamExchange{p: p}, nil
}

func (s *streamExchange) Answered() bool { return false }

func (s *streamExchange) Close() {
	if s.conn != nil {
		s.conn.Close()
	}
}

func (s *streamExchange) Run(ctx context.Context) error {
	p, o := s.p, s.p.Opts
	p.Mu.Lock()
	p.HopURL = o.URL
	p.ServerName = o.URL.Hostname()
	if tc := o.TLSConfig; tc != nil && tc.ServerName != "" {
		p.ServerName = tc.ServerName
	}
	// What net/http's GetConn hook does for HTTP: the connect window opens.
	p.Enter(p.FirstStage(o.URL, false))
	p.Arm(&p.ConnWin, o.ConnectTimeout)
	p.ConnDeadline = time.Now().Add(o.ConnectTimeout)
	p.Mu.Unlock()
	network := o.Network
	if network == "" {
		network = "tcp"
	}
	c, err := p.Dial(ctx, network, o.URL.Host)
	if err != nil {
		return err
	}
	s.conn = c
	if o.Secure() {
		conn := tlsClient(p, c)
		s.conn = conn
		if err := Handshake(p, ctx, conn, s.firstRecord); err != nil {
			return err
		}
	}
	if len(o.Dialogue) > 0 {
		return s.converse(ctx)
	}
	p.Mu.Lock()
	p.Disarm(&p.ConnWin)
	p.Stage = classify.StageDone
	p.Mu.Unlock()
	return nil
}

// maxDialogueLine bounds a line the dialogue reads.
const maxDialogueLine = 64 << 10

// converse runs the dialogue in the read window: a step that finds no
// matching line before the server closes is a failed condition (which
// step, what it wanted), a read that runs out of time the window's.
func (s *streamExchange) converse(ctx context.Context) error {
	p, o := s.p, s.p.Opts
	now := time.Now()
	p.Mu.Lock()
	p.Disarm(&p.ConnWin)
	p.ConnReady, p.WroteHeaders, p.Wrote = now, now, now
	p.EnterAt(classify.StageHeaders, now)
	p.ArmAt(&p.ReadWin, now, now.Add(o.ReadTimeout))
	p.Mu.Unlock()
	// A backstop only: the read window ends the probe (and closes the
	// connection) first.
	s.conn.SetDeadline(now.Add(o.ReadTimeout + 2*session.MaxTimeBackstop))
	scanner := func() *bufio.Scanner {
		sc := bufio.NewScanner(s.conn)
		sc.Buffer(make([]byte, 0, 4096), maxDialogueLine)
		return sc
	}
	sc := scanner()
	first := true
	for i, st := range o.Dialogue {
		send := st.Send
		if st.Expect != nil {
			var match []int
			for match == nil && sc.Scan() {
				if first {
					first = false
					p.Mu.Lock()
					p.FirstByte = time.Now()
					p.Record(result.PhaseTTFB, p.FirstByte.Sub(p.Wrote))
					p.Enter(classify.StageBody)
					p.Mu.Unlock()
				}
				match = st.Expect.FindSubmatchIndex(sc.Bytes())
			}
			if err := sc.Err(); err != nil {
				return err
			}
			if match == nil {
				s.failed = fmt.Sprintf("step %d of the dialogue: no line matched /%s/ before the server closed the connection", i+1, st.Expect)
				p.BodyRead(nil)
				return nil
			}
			send = string(st.Expect.Expand(nil, []byte(send), sc.Bytes(), match))
		}
		if send != "" {
			if _, err := io.WriteString(s.conn, send+"\n"); err != nil {
				return err
			}
		}
		if st.StartTLS {
			conn := tlsClient(p, s.conn)
			s.conn = conn
			if err := Handshake(p, ctx, conn, nil); err != nil {
				return err
			}
			p.Mu.Lock()
			p.Enter(classify.StageBody)
			p.Mu.Unlock()
			sc = scanner()
		}
	}
	p.BodyRead(nil)
	return nil
}

func (s *streamExchange) Describe(_ error, _ time.Time, _ *result.Result, obs *classify.Observation, f *classify.Facts) {
	if s.failed != "" {
		obs.ConditionFailed, f.Condition = true, s.failed
	}
	obs.Answer = connected{dialogueFailed: s.failed != ""}
}

// connected is a stream probe's answer: the connection (and the handshake)
// completed, and a dialogue's lines came or did not. It has nothing of its
// own to show.
type connected struct{ dialogueFailed bool }

func (connected) Kind() *classify.Kind { return scheme.StreamKind }

// Reason is a pass, but for a dialogue line that did not come.
func (c connected) Reason() classify.Reason {
	if c.dialogueFailed {
		return classify.ConditionFailed
	}
	return classify.OK
}

func (connected) Text(classify.Reason, error) string { return "" }
func (connected) Said() string                       { return "" }
func (connected) Status() string                     { return "" }
func (connected) Lines() []string                    { return nil }
func (connected) JSON() any                          { return nil }

// firstRecordWait is how long tls:// waits for the server's first record
// after a TLS 1.3 handshake in which it asked for a client certificate:
// the server judges the certificate (or its absence) only once it has the
// client's Finished, after the client's handshake is complete, and says
// so with an alert (certificate_required, bad_certificate, ...). openssl
// s_client waits for it the same way.
const firstRecordWait = 250 * time.Millisecond

// firstRecord reads the record a TLS 1.3 server sends after the handshake
// when it asked for a client certificate: an alert there is the
// handshake's failure; session tickets, data, or nothing within the wait
// are a pass. Under TLS 1.2, and when no certificate was asked for, the
// handshake's end is the verdict and nothing is read.
func (s *streamExchange) firstRecord(conn *tls.Conn) error {
	p := s.p
	p.Mu.Lock()
	asked := p.CertAsked
	p.Mu.Unlock()
	if !asked || conn.ConnectionState().Version != tls.VersionTLS13 {
		return nil
	}
	wait := time.Now().Add(firstRecordWait)
	if d, ok := p.Ctx.Deadline(); ok && d.Before(wait) {
		wait = d
	}
	conn.SetReadDeadline(wait)
	var b [1]byte
	_, err := conn.Read(b[:])
	conn.SetReadDeadline(time.Time{})
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		return nil
	}
	return err
}

// tlsClient is the TLS side of a connection the run dialled, through the
// shared TLS capture, for the name the certificate must carry (p.Mu not
// held): tls://, rediss://, PostgreSQL's sslmode=require.
func tlsClient(p *session.Probe, c net.Conn) *tls.Conn {
	p.SetStage(classify.StageTLS)
	tc := p.TLSConfig()
	if tc.ServerName == "" {
		p.Mu.Lock()
		tc.ServerName = p.ServerName
		p.Mu.Unlock()
	}
	return tls.Client(c, tc)
}

// Handshake completes conn's handshake, then after (when not nil: what
// the protocol reads of the handshake's end), recording the tls phase and,
// when the handshake completed, the connection state.
func Handshake(p *session.Probe, ctx context.Context, conn *tls.Conn, after func(*tls.Conn) error) error {
	err := conn.HandshakeContext(ctx)
	if err == nil && after != nil {
		err = after(conn)
	}
	p.Mu.Lock()
	p.Record(result.PhaseTLS, time.Since(p.StageStart))
	if cs := conn.ConnectionState(); cs.HandshakeComplete {
		p.TLSState = &cs
	}
	p.Mu.Unlock()
	return err
}
