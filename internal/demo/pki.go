package demo

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the demo's certificate authority: made at start, kept in memory.
// Only its certificate is written to disk (ca.pem, for --cacert); no
// private key ever is, so nothing secret can be left behind, whatever
// ends the demo.
type pki struct {
	caFile string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	made   time.Time
}

// newPKI makes the CA and writes its certificate into dir.
func newPKI(dir string) (*pki, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "healthctl demo CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p := &pki{caFile: filepath.Join(dir, "ca.pem"), ca: ca, caKey: key, made: now}
	if err := os.WriteFile(p.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	return p, nil
}

// leaf is a server certificate for 127.0.0.1 that is wrong in exactly one
// way (Go checks validity before the issuer, so two faults in one
// certificate would hide one): expired (issued by the CA, its validity
// over), or self-signed (valid, but signed by its own key).
func (p *pki) leaf(expired, selfSigned bool) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "healthctl demo service"},
		NotBefore:    p.made.Add(-time.Hour),
		NotAfter:     p.made.Add(24 * time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if expired {
		tmpl.NotBefore, tmpl.NotAfter = p.made.Add(-72*time.Hour), p.made.Add(-24*time.Hour)
	}
	parent, signer := p.ca, p.caKey
	if selfSigned {
		parent, signer = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail on the platforms we build for
	}
	return n
}
