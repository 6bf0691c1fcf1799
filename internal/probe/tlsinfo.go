package probe

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// tlsInfo describes the handshake from its state, or, when verification
// failed (the state is then empty), from the chain the server presented.
func tlsInfo(cs *tls.ConnectionState, err error, now time.Time) *TLSInfo {
	if cs != nil {
		return &TLSInfo{
			Version: tls.VersionName(cs.Version),
			Cipher:  tls.CipherSuiteName(cs.CipherSuite),
			Chain:   chain(cs.PeerCertificates, now),
		}
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return &TLSInfo{Chain: chain(cv.UnverifiedCertificates, now)}
	}
	return nil
}

func chain(certs []*x509.Certificate, now time.Time) []CertInfo {
	out := make([]CertInfo, 0, len(certs))
	for _, c := range certs {
		sans := append([]string(nil), c.DNSNames...)
		for _, ip := range c.IPAddresses {
			sans = append(sans, ip.String())
		}
		for _, u := range c.URIs {
			sans = append(sans, u.String())
		}
		sans = append(sans, c.EmailAddresses...)
		if sans == nil {
			sans = []string{}
		}
		out = append(out, CertInfo{
			Subject:   c.Subject.String(),
			Issuer:    c.Issuer.String(),
			SANs:      sans,
			NotBefore: c.NotBefore.UTC(),
			NotAfter:  c.NotAfter.UTC(),
			DaysLeft:  DaysLeft(c.NotAfter, now),
		})
	}
	return out
}

// DaysLeft is the number of whole days until notAfter, rounded toward zero
// (29.5 days left is 29), except that an expired certificate is at least
// -1: one that expired a day ago is -1, an hour ago -1 too.
func DaysLeft(notAfter, now time.Time) int {
	d := notAfter.Sub(now)
	days := int(d / (24 * time.Hour))
	if d < 0 && days == 0 {
		return -1
	}
	return days
}

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
