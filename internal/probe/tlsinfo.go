package probe

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
)

// tlsConfig is the TLS capture every protocol's handshake goes through:
// the options' configuration, with the chain verified after the handshake
// (as crypto/tls would have during it), so version, cipher and chain are
// recorded also when verification fails.
func (p *run) tlsConfig() *tls.Config {
	tc := p.opts.TLSConfig.Clone() // net/http writes NextProtos into it: one per transport
	if tc == nil {
		tc = &tls.Config{}
	}
	if !tc.InsecureSkipVerify {
		tc.InsecureSkipVerify = true
		tc.VerifyConnection = p.verifyConnection
	} else {
		tc.VerifyConnection = p.keepState
	}
	return tc
}

// keepState records the handshake's state (--insecure: nothing to verify).
func (p *run) keepState(cs tls.ConnectionState) error {
	p.mu.Lock()
	p.tlsState = &cs
	p.mu.Unlock()
	return nil
}

// verifyConnection verifies the server's chain after the handshake, as
// crypto/tls would have during it, so that the version, cipher and chain
// are recorded also when verification fails. Its errors are the ones
// crypto/tls returns: a *tls.CertificateVerificationError wrapping the x509
// error, with the presented chain.
func (p *run) verifyConnection(cs tls.ConnectionState) error {
	p.mu.Lock()
	p.tlsState = &cs
	name := p.serverName
	p.mu.Unlock()
	certs := cs.PeerCertificates
	if len(certs) == 0 {
		return fmt.Errorf("tls: the server presented no certificate")
	}
	opts := x509.VerifyOptions{DNSName: name, Intermediates: x509.NewCertPool()}
	if tc := p.opts.TLSConfig; tc != nil {
		opts.Roots = tc.RootCAs
		if tc.Time != nil {
			opts.CurrentTime = tc.Time()
		}
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
	}
	return nil
}
