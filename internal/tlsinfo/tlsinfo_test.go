package tlsinfo

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"
)

func TestDaysLeft(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, c := range []struct {
		after time.Duration
		want  int
	}{
		{29*day + 12*time.Hour, 29},
		{day, 1},
		{23 * time.Hour, 0},
		{-time.Hour, -1},
		{-day - time.Minute, -1}, // expired a day ago
		{-2*day - time.Minute, -2},
	} {
		if got := DaysLeft(now.Add(c.after), now); got != c.want {
			t.Errorf("DaysLeft(now%+v) = %d, want %d", c.after, got, c.want)
		}
	}
}

// TestVerified: a handshake state is verified unless its verification
// failed (the state is kept then too) or was off.
func TestVerified(t *testing.T) {
	cert := &x509.Certificate{NotAfter: time.Now().Add(time.Hour)}
	cs := &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
	if i := Describe(cs, nil, time.Now()); !i.Verified || i.NotVerified != "" {
		t.Errorf("verified handshake: %+v", i)
	}
	bad := &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: x509.UnknownAuthorityError{}}
	if i := Describe(cs, bad, time.Now()); i.Verified {
		t.Errorf("failed verification: %+v", i)
	}
	i := Describe(cs, nil, time.Now())
	i.VerificationOff("")
	if i.Verified || i.NotVerified != "--insecure" {
		t.Errorf("verification off: %+v", i)
	}
	var none *Info
	none.VerificationOff("x") // no handshake: no panic
}
