package tlsinfo_test

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"

	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/tlsinfo"
)

// TestStaple: a staple signed by the issuer is read for its status and
// freshness; one for another certificate, or signed by another key, is
// invalid; a revoked one and a must-staple certificate without one are the
// handshake's errors.
func TestStaple(t *testing.T) {
	pki, err := pkifix.NewPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := pkifix.NewPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	stapled := func(p *pkifix.PKI, status int, stale bool) tls.Certificate {
		c, err := p.StapledCertificate(status, stale)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	good := stapled(pki, ocsp.Good, false)
	for _, tc := range []struct {
		name    string
		staple  []byte
		issuer  bool
		status  string
		stale   bool
		errPart string
		verdict string
	}{
		{"good", good.OCSPStaple, true, tlsinfo.StapleGood, false, "", ""},
		{"revoked", stapled(pki, ocsp.Revoked, false).OCSPStaple, true, tlsinfo.StapleRevoked, false, "", "is revoked (at "},
		{"unknown", stapled(pki, ocsp.Unknown, false).OCSPStaple, true, tlsinfo.StapleUnknown, false, "", ""},
		{"stale", stapled(pki, ocsp.Good, true).OCSPStaple, true, tlsinfo.StapleGood, true, "", ""},
		{"no issuer at hand", good.OCSPStaple, false, tlsinfo.StapleGood, false, "signature is not checked", ""},
		{"signed by another CA", stapled(other, ocsp.Revoked, false).OCSPStaple, true, tlsinfo.StapleInvalid, false, "", ""},
		{"garbage", []byte("not ocsp"), true, tlsinfo.StapleInvalid, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var issuer = pki.CA
			if !tc.issuer {
				issuer = nil
			}
			o := tlsinfo.Staple(tc.staple, good.Leaf, issuer, nil, now)
			if o == nil || o.Status != tc.status || o.Stale != tc.stale || !strings.Contains(o.Error, tc.errPart) {
				t.Fatalf("Staple = %+v, want status %s stale %v error %q", o, tc.status, tc.stale, tc.errPart)
			}
			err := tlsinfo.StapleVerdict(good.Leaf, o)
			var se *tlsinfo.StapleError
			if tc.verdict == "" && err != nil || tc.verdict != "" && (!errors.As(err, &se) || !strings.Contains(err.Error(), tc.verdict)) {
				t.Fatalf("StapleVerdict = %v, want %q", err, tc.verdict)
			}
		})
	}
	if o := tlsinfo.Staple(nil, good.Leaf, pki.CA, nil, now); o != nil {
		t.Errorf("no staple read as %+v", o)
	}
	ms, err := pki.MustStapleCertificate()
	if err != nil {
		t.Fatal(err)
	}
	if err := tlsinfo.StapleVerdict(ms.Leaf, nil); err == nil || !strings.Contains(err.Error(), "must be stapled") {
		t.Errorf("must-staple without a staple: %v", err)
	}
	if err := tlsinfo.StapleVerdict(good.Leaf, nil); err != nil {
		t.Errorf("no staple, not must-staple: %v", err)
	}
}
