package probe

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
)

// streamExchange is tcp:// (a connect and nothing more: the kubelet's
// tcpSocket, blackbox's tcp prober) and tls:// (a connect and a TLS
// handshake whose chain is verified: certificate checks of services that do
// not speak HTTP). Nothing is written once connected; the connection is
// closed at once. No proxy is used: a tunnel would prove only that the
// proxy connected.
type streamExchange struct {
	p    *run
	conn net.Conn
}

func newStream(_ context.Context, p *run) (exchange, error) {
	return &streamExchange{p: p}, nil
}

func (s *streamExchange) answered() bool { return false }

func (s *streamExchange) close() {
	if s.conn != nil {
		s.conn.Close()
	}
}

func (s *streamExchange) run(ctx context.Context) error {
	p, o := s.p, s.p.opts
	p.mu.Lock()
	p.hopURL = o.URL
	p.serverName = o.URL.Hostname()
	if tc := o.TLSConfig; tc != nil && tc.ServerName != "" {
		p.serverName = tc.ServerName
	}
	// What net/http's GetConn hook does for HTTP: the connect window opens.
	p.enter(p.firstStage(o.URL, false))
	p.arm(&p.connWin, o.ConnectTimeout)
	p.connDeadline = time.Now().Add(o.ConnectTimeout)
	p.mu.Unlock()
	network := o.Network
	if network == "" {
		network = "tcp"
	}
	c, err := p.dial(ctx, network, o.URL.Host)
	if err != nil {
		return err
	}
	s.conn = c
	if o.URL.Scheme == "tls" {
		conn := p.tlsClient(c)
		s.conn = conn
		if err := p.handshake(ctx, conn); err != nil {
			return err
		}
	}
	p.mu.Lock()
	p.disarm(&p.connWin)
	p.stage = classify.StageDone
	p.mu.Unlock()
	return nil
}

func (s *streamExchange) describe(_ error, _ time.Time, _ *Result, obs *classify.Observation, _ *classify.Facts) {
	obs.Protocol = classify.ProtoTCP
	if s.p.opts.URL.Scheme == "tls" {
		obs.Protocol = classify.ProtoTLS
	}
}

// tlsClient is the TLS side of a connection the run dialled, through the
// shared TLS capture, for the name the certificate must carry (p.mu not
// held): tls://, rediss://, PostgreSQL's sslmode=require.
func (p *run) tlsClient(c net.Conn) *tls.Conn {
	p.setStage(classify.StageTLS)
	tc := p.tlsConfig()
	if tc.ServerName == "" {
		p.mu.Lock()
		tc.ServerName = p.serverName
		p.mu.Unlock()
	}
	return tls.Client(c, tc)
}

// handshake completes conn's handshake, recording the tls phase and, when
// it completed, the connection state.
func (p *run) handshake(ctx context.Context, conn *tls.Conn) error {
	err := conn.HandshakeContext(ctx)
	p.mu.Lock()
	p.record(PhaseTLS, time.Since(p.stageStart))
	if err == nil {
		cs := conn.ConnectionState()
		p.tlsState = &cs
	}
	p.mu.Unlock()
	return err
}
