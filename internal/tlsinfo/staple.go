package tlsinfo

import (
	"crypto/x509"
	"fmt"
	"time"

	"golang.org/x/crypto/ocsp"
)

// OCSP is what the OCSP response the server stapled in the handshake says
// of its certificate. Nothing is fetched from the network: only the
// staple is read.
type OCSP struct {
	// Status is good, revoked, unknown (the responder does not know the
	// certificate), or invalid (the staple does not parse, is not for
	// this certificate, or its signature does not verify: Error says why).
	Status     string    `json:"status"`
	ThisUpdate time.Time `json:"this_update,omitzero"`
	NextUpdate time.Time `json:"next_update,omitzero"`
	RevokedAt  time.Time `json:"revoked_at,omitzero"`
	// Stale: the response's next update has passed (or its this update
	// is still to come): it no longer says anything current.
	Stale bool   `json:"stale,omitempty"`
	Error string `json:"error,omitempty"`
}

// The staple's statuses.
const (
	StapleGood    = "good"
	StapleRevoked = "revoked"
	StapleUnknown = "unknown"
	StapleInvalid = "invalid"
)

// Staple reads a stapled OCSP response for leaf, its signature checked
// against issuer (the next certificate of the verified chain); nil when
// the server stapled nothing. With no issuer known (verification off) the
// issuer is looked for among the presented certificates; when none is
// found the signature is not checked and Error says so.
func Staple(staple []byte, leaf, issuer *x509.Certificate, presented []*x509.Certificate, now time.Time) *OCSP {
	if len(staple) == 0 || leaf == nil {
		return nil
	}
	if issuer == nil {
		for _, c := range presented {
			if c != leaf && string(c.RawSubject) == string(leaf.RawIssuer) {
				issuer = c
				break
			}
		}
	}
	var resp *ocsp.Response
	var err error
	if issuer != nil {
		resp, err = ocsp.ParseResponseForCert(staple, leaf, issuer)
	} else {
		resp, err = ocsp.ParseResponse(staple, nil)
	}
	if err != nil {
		return &OCSP{Status: StapleInvalid, Error: err.Error()}
	}
	o := &OCSP{ThisUpdate: resp.ThisUpdate.UTC(), NextUpdate: resp.NextUpdate.UTC()}
	if issuer == nil {
		o.Error = "the issuer was not presented: the response's signature is not checked"
	}
	if resp.SerialNumber == nil || leaf.SerialNumber == nil || resp.SerialNumber.Cmp(leaf.SerialNumber) != 0 {
		return &OCSP{Status: StapleInvalid, Error: "the stapled response is for another certificate (serial " + fmt.Sprint(resp.SerialNumber) + ")"}
	}
	switch resp.Status {
	case ocsp.Good:
		o.Status = StapleGood
	case ocsp.Revoked:
		o.Status = StapleRevoked
		o.RevokedAt = resp.RevokedAt.UTC()
	default:
		o.Status = StapleUnknown
	}
	o.Stale = (!resp.NextUpdate.IsZero() && now.After(resp.NextUpdate)) || now.Before(resp.ThisUpdate.Add(-5*time.Minute))
	return o
}

// StapleError is a handshake refused for what the certificate's OCSP
// status says: the server stapled a response saying it is revoked, or the
// certificate must be stapled (RFC 7633) and the server stapled nothing.
type StapleError struct {
	// Revoked: the staple says revoked (at RevokedAt); else the
	// certificate is must-staple and no staple came.
	Revoked   bool
	RevokedAt time.Time
	Subject   string
}

func (e *StapleError) Error() string {
	if e.Revoked {
		return fmt.Sprintf("tls: the server's certificate %s is revoked (at %s), as the OCSP response it stapled says",
			e.Subject, e.RevokedAt.Format(time.RFC3339))
	}
	return fmt.Sprintf("tls: the server's certificate %s must be stapled (OCSP must-staple, RFC 7633) and the server stapled no OCSP response", e.Subject)
}

// StapleVerdict is the error a staple's status makes of a verified
// handshake: a revoked certificate, or a must-staple one without a staple
// (nil staple); nil when neither.
func StapleVerdict(leaf *x509.Certificate, staple *OCSP) error {
	if leaf == nil {
		return nil
	}
	switch {
	case staple != nil && staple.Status == StapleRevoked:
		return &StapleError{Revoked: true, RevokedAt: staple.RevokedAt, Subject: leaf.Subject.String()}
	case staple == nil && mustStaple(leaf):
		return &StapleError{Subject: leaf.Subject.String()}
	}
	return nil
}
