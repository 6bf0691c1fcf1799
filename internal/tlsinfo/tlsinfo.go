// Package tlsinfo describes a TLS handshake from its state, or, when
// verification failed, from the chain the server presented: version,
// cipher, and each certificate's subject, issuer, names and validity.
// Verify checks a chain as crypto/tls would. It is pure: the probe hands it
// what the handshake gave.
package tlsinfo

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// Info describes the handshake, also when verification failed.
type Info struct {
	Version string `json:"version,omitempty"`
	Cipher  string `json:"cipher,omitempty"`
	Chain   []Cert `json:"chain"`
}

// Cert is one presented certificate.
type Cert struct {
	Subject   string    `json:"subject"`
	Issuer    string    `json:"issuer"`
	SANs      []string  `json:"sans"`
	NotBefore time.Time `json:"not_before"`
	NotAfter  time.Time `json:"not_after"`
	DaysLeft  int       `json:"days_left"`
}

// Describe describes the handshake from its state, or, when verification
// failed (the state is then empty), from the chain the server presented.
func Describe(cs *tls.ConnectionState, err error, now time.Time) *Info {
	if cs != nil {
		return &Info{
			Version: tls.VersionName(cs.Version),
			Cipher:  tls.CipherSuiteName(cs.CipherSuite),
			Chain:   chain(cs.PeerCertificates, now),
		}
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return &Info{Chain: chain(cv.UnverifiedCertificates, now)}
	}
	return nil
}

func chain(certs []*x509.Certificate, now time.Time) []Cert {
	out := make([]Cert, 0, len(certs))
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
		out = append(out, Cert{
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

// Verify verifies a presented chain for name as crypto/tls would have
// during the handshake, with tc's roots (nil: the system's) and clock. Its
// errors are the ones crypto/tls returns: a *tls.CertificateVerificationError
// wrapping the x509 error, with the presented chain.
func Verify(certs []*x509.Certificate, tc *tls.Config, name string) error {
	if len(certs) == 0 {
		return fmt.Errorf("tls: the server presented no certificate")
	}
	opts := x509.VerifyOptions{DNSName: name, Intermediates: x509.NewCertPool()}
	if tc != nil {
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
