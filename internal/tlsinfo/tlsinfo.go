// Package tlsinfo describes a TLS handshake from its state, or, when
// verification failed, from the chain the server presented: version,
// cipher, and each certificate's subject, issuer, names and validity.
// Verify checks a chain as crypto/tls would. It is pure: the probe hands it
// what the handshake gave.
package tlsinfo

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"time"
)

// Info describes the handshake, also when verification failed.
type Info struct {
	Version string `json:"version,omitempty"`
	Cipher  string `json:"cipher,omitempty"`
	Chain   []Cert `json:"chain"`
	// Verified: the chain and name were verified (false also when the
	// verification failed: the error says why).
	Verified bool `json:"verified"`
	// NotVerified names where the switch came from that turned
	// verification off (--insecure, HEALTHCTL_INSECURE, a config key).
	NotVerified string `json:"not_verified,omitempty"`
	// OCSP is what the OCSP response the server stapled says of its
	// certificate (absent when it stapled none).
	OCSP *OCSP `json:"ocsp,omitempty"`
}

// VerificationOff marks i as a handshake whose chain was not verified
// because verification was turned off by why ("--insecure" when empty).
// A nil i (no handshake) stays nil.
func (i *Info) VerificationOff(why string) {
	if i == nil {
		return
	}
	if why == "" {
		why = "--insecure"
	}
	i.Verified, i.NotVerified = false, why
}

// Cert is one presented certificate.
type Cert struct {
	Subject   string    `json:"subject"`
	Issuer    string    `json:"issuer"`
	SANs      []string  `json:"sans"`
	NotBefore time.Time `json:"not_before"`
	NotAfter  time.Time `json:"not_after"`
	DaysLeft  int       `json:"days_left"`
	// MustStaple: the certificate carries the TLS Feature extension
	// with status_request (RFC 7633, "OCSP must-staple"); StapleMissing:
	// the server sent no OCSP staple with it, which browsers refuse, and
	// so does the probe (tls_must_staple) unless -k.
	MustStaple    bool `json:"must_staple,omitempty"`
	StapleMissing bool `json:"staple_missing,omitempty"`
	// SHA256 is the certificate's fingerprint and DNSNames how many of
	// SANs (the first) are DNS names: blackbox_exporter's
	// probe_ssl_last_chain_info labels.
	SHA256   [32]byte `json:"-"`
	DNSNames int      `json:"-"`
}

// Describe describes the handshake from its state, or, when verification
// failed (the state is then empty), from the chain the server presented.
func Describe(cs *tls.ConnectionState, err error, now time.Time) *Info {
	if cs != nil {
		info := &Info{
			Version: tls.VersionName(cs.Version),
			Cipher:  tls.CipherSuiteName(cs.CipherSuite),
			Chain:   chain(cs.PeerCertificates, now),
			// Verified unless the verification failed (the state is
			// kept also then) or was off (VerificationOff says so).
			Verified: len(cs.PeerCertificates) > 0,
		}
		if err != nil {
			var cv *tls.CertificateVerificationError
			var se *StapleError
			if errors.As(err, &cv) || errors.As(err, &se) {
				info.Verified = false
			}
		}
		if len(info.Chain) > 0 && info.Chain[0].MustStaple && len(cs.OCSPResponse) == 0 {
			info.Chain[0].StapleMissing = true
		}
		return info
	}
	if err == nil {
		// Checked first: the target of errors.As lives on the heap, and
		// most probes have no error.
		return nil
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
			Subject:    c.Subject.String(),
			Issuer:     c.Issuer.String(),
			SANs:       sans,
			NotBefore:  c.NotBefore.UTC(),
			NotAfter:   c.NotAfter.UTC(),
			DaysLeft:   DaysLeft(c.NotAfter, now),
			MustStaple: mustStaple(c),
			SHA256:     sha256.Sum256(c.Raw),
			DNSNames:   len(c.DNSNames),
		})
	}
	return out
}

// oidTLSFeature is the TLS Feature extension (RFC 7633).
var oidTLSFeature = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 1, 24}

// mustStaple says c's TLS Feature extension asks for status_request (5).
func mustStaple(c *x509.Certificate) bool {
	for _, e := range c.Extensions {
		if !e.Id.Equal(oidTLSFeature) {
			continue
		}
		var features []int
		if _, err := asn1.Unmarshal(e.Value, &features); err != nil {
			return false
		}
		for _, f := range features {
			if f == 5 {
				return true
			}
		}
	}
	return false
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
	_, err := VerifyChain(certs, tc, name)
	return err
}

// VerifyChain is Verify, returning the first chain it verified (leaf
// first, root last).
func VerifyChain(certs []*x509.Certificate, tc *tls.Config, name string) ([]*x509.Certificate, error) {
	if len(certs) == 0 {
		return nil, fmt.Errorf("tls: the server presented no certificate")
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
	chains, err := certs[0].Verify(opts)
	if err != nil {
		return nil, &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: chainFault(certs, opts, err)}
	}
	return chains[0], nil
}

// ChainOrderError is a chain whose first certificate (the one a client
// takes as the server's) is a CA, while the server's own certificate
// comes later: sent out of order, not issued for another name.
type ChainOrderError struct {
	First  string // the first certificate's subject
	Leaf   string // the server's certificate's subject
	Index  int    // where it came
	Name   string
	Reason error // what verifying the first certificate said
}

func (e *ChainOrderError) Error() string {
	return fmt.Sprintf("tls: the server sent its chain out of order: the first certificate is a CA (%s), and the certificate for %s (%s) comes at position %d; "+
		"clients take the first as the server's, so it is no name mismatch: fix the order of the server's certificate file", e.First, e.Name, e.Leaf, e.Index)
}

func (e *ChainOrderError) Unwrap() error { return e.Reason }

// chainFault says what a failed verification is when the chain itself is
// at fault: sent out of order (the server's certificate is not the first),
// or missing an intermediate (the first certificate's issuer was neither
// sent nor trusted). Anything else is err as it was.
func chainFault(certs []*x509.Certificate, opts x509.VerifyOptions, err error) error {
	var host x509.HostnameError
	if errors.As(err, &host) && certs[0].IsCA && len(certs) > 1 && opts.DNSName != "" {
		for i, c := range certs[1:] {
			if c.IsCA || c.VerifyHostname(opts.DNSName) != nil {
				continue
			}
			o := opts
			o.Intermediates = x509.NewCertPool()
			for j, other := range certs {
				if j != i+1 {
					o.Intermediates.AddCert(other)
				}
			}
			if _, verr := c.Verify(o); verr == nil {
				return &ChainOrderError{First: certs[0].Subject.String(), Leaf: c.Subject.String(), Index: i + 2, Name: opts.DNSName, Reason: err}
			}
		}
	}
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) && string(certs[0].RawIssuer) != string(certs[0].RawSubject) {
		for _, c := range certs[1:] {
			if string(c.RawSubject) == string(certs[0].RawIssuer) {
				return err
			}
		}
		return fmt.Errorf("%w (the server did not send its issuer, %s: a missing intermediate certificate, or an authority this client does not trust)",
			err, certs[0].Issuer.String())
	}
	return err
}
