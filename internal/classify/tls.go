package classify

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/tlsinfo"
)

// tlsAlertReason names a TLS failure by what the server said or asked: a
// client certificate it wanted (asked for at the handshake or by
// renegotiation, or alerted about under TLS 1.3 after the request), no
// protocol version in common, or another alert.
func tlsAlertReason(o Observation, err error, op *net.OpError) (Reason, bool) {
	remote := op != nil && op.Op == "remote error"
	var alert tls.AlertError
	if errors.As(err, &alert) {
		remote = true
	}
	text := err.Error()
	switch {
	case remote && strings.Contains(text, "certificate required"):
		return TLSClientCertRequired, true
	case strings.Contains(text, "protocol version"), strings.Contains(text, "no supported versions"),
		strings.Contains(text, "unsupported versions"):
		return TLSProtocolVersion, true
	case o.ClientCertAsked && !o.ClientCertGiven && (remote || o.Stage == StageTLS ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(text, h2NotEstablished)):
		// Asked for a certificate, given none, and the connection
		// failed: the server turned the prober away for it. Under TLS
		// 1.3 its alert comes after the client's handshake is done, and
		// a request written then may fail first ("broken pipe", a
		// reset): the alert the server sent is the answer, not the
		// write's error.
		return TLSClientCertRequired, true
	case o.ClientCertAsked && o.ClientCertGiven && remote && refusedCert(text):
		return TLSClientCertRequired, true
	case remote:
		return TLSRemoteAlert, true
	}
	return "", false
}

// h2NotEstablished is net/http's HTTP/2 error for a connection that ended
// before the server's first frame (its SETTINGS) arrived: its cause (the
// alert a TLS 1.3 server sent after the handshake) is not kept.
const h2NotEstablished = "http2: client conn could not be established"

// refusedCert says an alert's text is one a server sends for a client
// certificate it does not accept.
func refusedCert(text string) bool {
	for _, s := range []string{"bad certificate", "unknown certificate authority", "certificate unknown", "access denied",
		"unsupported certificate", "expired certificate", "revoked certificate"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// certReason recognises certificate verification failures. The x509 error
// types are values, so errors.As needs value targets.
func certReason(err error, now time.Time) (Reason, bool) {
	var order *tlsinfo.ChainOrderError
	if errors.As(err, &order) {
		// Out of order, not issued for another name: no certificate
		// being issued explains it.
		return TLSHandshakeFailure, true
	}
	var staple *tlsinfo.StapleError
	if errors.As(err, &staple) {
		if staple.Revoked {
			return TLSRevoked, true
		}
		return TLSMustStaple, true
	}
	var host x509.HostnameError
	if errors.As(err, &host) {
		return TLSHostnameMismatch, true
	}
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) {
		// Go keeps why a candidate authority was turned down only in
		// the error's text: a SHA-1 (or MD5) signature from a trusted
		// CA reads "… insecure algorithm SHA1-RSA …" (curl: "CA
		// signature digest algorithm too weak").
		if strings.Contains(ua.Error(), "insecure algorithm") {
			return TLSInsecureAlgorithm, true
		}
		return TLSUnknownAuthority, true
	}
	var ia x509.InsecureAlgorithmError
	if errors.As(err, &ia) {
		return TLSInsecureAlgorithm, true
	}
	var inv x509.CertificateInvalidError
	if errors.As(err, &inv) {
		if inv.Reason == x509.Expired {
			if inv.Cert != nil && now.Before(inv.Cert.NotBefore) {
				return TLSNotYetValid, true
			}
			return TLSExpired, true
		}
		return TLSHandshakeFailure, true
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return TLSHandshakeFailure, true
	}
	return "", false
}
