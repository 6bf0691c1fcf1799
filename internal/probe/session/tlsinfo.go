package session

import (
	"crypto/tls"
	"crypto/x509"
	"time"

	"github.com/healthctl/healthctl/internal/tlsinfo"
)

// TLSConfig is the TLS capture every protocol's handshake goes through:
// the options' configuration, with the chain verified after the handshake
// (as crypto/tls would have during it), so version, cipher and chain are
// recorded also when verification fails.
func (p *Probe) TLSConfig() *tls.Config {
	tc := p.Opts.TLSConfig.Clone() // net/http writes NextProtos into it: one per transport
	if tc == nil {
		tc = &tls.Config{}
	}
	// A server may ask for the client certificate at the handshake or,
	// on TLS 1.2, by renegotiating (Apache's per-location
	// SSLVerifyClient): answer once, as curl does, and note that it
	// asked, so a refusal is named for the certificate.
	tc.Renegotiation = tls.RenegotiateOnceAsClient
	certs, get := tc.Certificates, tc.GetClientCertificate
	tc.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		p.Mu.Lock()
		p.CertAsked = true
		p.Mu.Unlock()
		if get != nil {
			return get(cri)
		}
		if len(certs) > 0 {
			return &certs[0], nil
		}
		return &tls.Certificate{}, nil
	}
	target := p.KeepState
	if !tc.InsecureSkipVerify {
		tc.InsecureSkipVerify = true
		target = p.verifyConnection
	}
	tc.VerifyConnection = func(cs tls.ConnectionState) error {
		p.Mu.Lock()
		proxy := p.InProxyTLS
		p.Mu.Unlock()
		if proxy {
			return p.verifyProxy(cs)
		}
		return target(cs)
	}
	return tc
}

// verifyProxy verifies an https:// proxy's own certificate against the
// proxy's name, with --proxy-cacert (else the system's roots), unless
// --proxy-insecure: -k and --cacert are the target's, as curl keeps them.
func (p *Probe) verifyProxy(cs tls.ConnectionState) error {
	p.Mu.Lock()
	p.ProxyTLSState = &cs
	name := p.ProxyURL.Hostname()
	p.Mu.Unlock()
	ptc := p.Opts.ProxyTLSConfig
	if ptc != nil && ptc.InsecureSkipVerify {
		return nil
	}
	return tlsinfo.Verify(cs.PeerCertificates, ptc, name)
}

// KeepState records the handshake's state (--insecure: nothing to verify).
func (p *Probe) KeepState(cs tls.ConnectionState) error {
	var staple *tlsinfo.OCSP
	if len(cs.PeerCertificates) > 0 {
		// Shown, never judged: verification is off.
		staple = tlsinfo.Staple(cs.OCSPResponse, cs.PeerCertificates[0], nil, cs.PeerCertificates, time.Now())
	}
	p.Mu.Lock()
	p.TLSState = &cs
	p.OCSP = staple
	p.Mu.Unlock()
	return nil
}

// verifyConnection verifies the server's chain after the handshake (see
// tlsinfo.Verify), so that the version, cipher and chain are recorded also
// when verification fails.
//
// A verified chain's stapled OCSP response is read then: a certificate it
// says is revoked, or a must-staple certificate with no staple, fails the
// handshake (tls_revoked, tls_must_staple); an unknown, stale or invalid
// staple is only shown.
func (p *Probe) verifyConnection(cs tls.ConnectionState) error {
	p.Mu.Lock()
	name := p.ServerName
	p.Mu.Unlock()
	return p.VerifyAgainst(cs, name)
}

// VerifyAgainst is verifyConnection for a given name to check, "" for the
// chain alone (PostgreSQL's sslmode=verify-ca): the staple is judged all
// the same.
func (p *Probe) VerifyAgainst(cs tls.ConnectionState, name string) error {
	p.Mu.Lock()
	p.TLSState = &cs
	p.Mu.Unlock()
	chain, err := tlsinfo.VerifyChain(cs.PeerCertificates, p.Opts.TLSConfig, name)
	if err != nil {
		return err
	}
	var issuer *x509.Certificate
	if len(chain) > 1 {
		issuer = chain[1]
	}
	now := time.Now()
	if tc := p.Opts.TLSConfig; tc != nil && tc.Time != nil {
		now = tc.Time()
	}
	staple := tlsinfo.Staple(cs.OCSPResponse, chain[0], issuer, cs.PeerCertificates, now)
	p.Mu.Lock()
	p.OCSP = staple
	p.Mu.Unlock()
	return tlsinfo.StapleVerdict(chain[0], staple)
}
