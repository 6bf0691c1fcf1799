package probe

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
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
			DaysLeft:  int(math.Floor(c.NotAfter.Sub(now).Hours() / 24)),
		})
	}
	return out
}
