package demo

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// TestServicesFailAsNamed: each service fails in the one way its name says,
// seen with the standard library's client rather than healthctl's.
func TestServicesFailAsNamed(t *testing.T) {
	l, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	caPEM, err := os.ReadFile(l.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{
		Timeout:       500 * time.Millisecond,
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	byName := map[string]Service{}
	for _, s := range l.Services {
		u, err := url.Parse(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		if h := u.Hostname(); h != "127.0.0.1" && !strings.HasSuffix(h, ".invalid") {
			t.Errorf("%s: %s is neither loopback nor .invalid", s.Name, s.URL)
		}
		byName[s.Name] = s
	}
	get := func(name string) (*http.Response, error) {
		s, ok := byName[name]
		if !ok {
			t.Fatalf("no service %q", name)
		}
		r, err := client.Get(s.URL)
		if err == nil {
			r.Body.Close()
		}
		return r, err
	}
	if r, err := get("healthy"); err != nil || r.StatusCode != 200 {
		t.Errorf("healthy: %v %v", r, err)
	}
	if r, err := get("warming up (503)"); err != nil || r.StatusCode != 503 || r.Header.Get("Retry-After") != "2" {
		t.Errorf("warming up: %v %v", r, err)
	}
	if r, err := get("redirects to another site"); err != nil || r.StatusCode != 302 || !strings.Contains(r.Header.Get("Location"), ".invalid") {
		t.Errorf("redirect: %v %v", r, err)
	}
	if _, err := get("nothing listens"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("nothing listens: %v", err)
	}
	var ne net.Error
	if _, err := get("hangs after the request"); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("hang: %v", err)
	}
	var unknown x509.UnknownAuthorityError
	if _, err := get("self-signed certificate"); !errors.As(err, &unknown) {
		t.Errorf("self-signed: %v", err)
	}
	var invalid x509.CertificateInvalidError
	if _, err := get("expired certificate"); !errors.As(err, &invalid) || invalid.Reason != x509.Expired {
		t.Errorf("expired: %v", err)
	}

	// No private key in the directory, ever.
	filepath.Walk(l.Dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "PRIVATE KEY") {
				t.Errorf("%s holds a private key", p)
			}
		}
		return nil
	})
	l.Close()
	if _, err := os.Stat(l.Dir); !os.IsNotExist(err) {
		t.Errorf("%s still there after Close: %v", l.Dir, err)
	}
}

func TestDNSAnswers(t *testing.T) {
	for name, want := range map[string]dnsmessage.RCode{
		"nx.invalid.":              dnsmessage.RCodeNameError,
		"login.other.invalid.":     dnsmessage.RCodeNameError,
		"nx.invalid.corp.example.": dnsmessage.RCodeNameError,
		"example.com.":             dnsmessage.RCodeRefused,
	} {
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, RecursionDesired: true})
		b.StartQuestions()
		b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
		q, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		var p dnsmessage.Parser
		h, err := p.Start(dnsAnswer(q))
		if err != nil || h.ID != 7 || !h.Response || h.RCode != want {
			t.Errorf("%s: %+v %v, want %v", name, h, err, want)
		}
	}
	if dnsAnswer([]byte{1, 2}) != nil {
		t.Error("a malformed message got an answer")
	}
}

// TestPortBase: with a port base, the services use the ports from it on,
// and a port taken says which range the flag asked for.
func TestPortBase(t *testing.T) {
	var l *Lab
	var base int
	// Look for a free range (another test or program may hold any port).
	for try := 0; try < 20 && l == nil; try++ {
		probe, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base = probe.Addr().(*net.TCPAddr).Port
		probe.Close()
		if base > 65536-Ports {
			continue
		}
		l, _ = Start(Options{PortBase: base})
	}
	if l == nil {
		t.Skip("no free range of ports found")
	}
	defer l.Close()
	if want := "127.0.0.1:" + itoa(base); l.DNS != want {
		t.Errorf("DNS on %s, want %s", l.DNS, want)
	}
	for i, s := range l.Services[:7] {
		if want := ":" + itoa(base+1+i) + "/"; !strings.Contains(s.URL, want) {
			t.Errorf("%s: %s, want port %d", s.Name, s.URL, base+1+i)
		}
	}
	// The same base again: its first port is taken.
	_, err := Start(Options{PortBase: base})
	if err == nil || !strings.Contains(err.Error(), "--port-base "+itoa(base)+" uses ports "+itoa(base)+" to "+itoa(base+Ports-1)) {
		t.Errorf("second start: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCheckPortBase(t *testing.T) {
	for base, ok := range map[int]bool{0: true, 1: true, 20000: true, 65536 - Ports: true, 65536 - Ports + 1: false, -1: false} {
		if err := CheckPortBase(base); (err == nil) != ok {
			t.Errorf("%d: %v", base, err)
		}
	}
}

func TestSwitch(t *testing.T) {
	s, err := startSwitch("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for _, up := range []bool{true, false, true} {
		if err := s.Set(up); err != nil {
			t.Fatal(err)
		}
		r, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get(s.URL())
		if r != nil {
			r.Body.Close()
		}
		if up != (err == nil) {
			t.Errorf("up=%v: %v", up, err)
		}
	}
}

func TestDrainSubjectRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"-addr", "127.0.0.1:1", "-mode", "cut"},
		{"-addr", "10.0.0.1:80"},
		{"-nope"},
	} {
		var stderr strings.Builder
		if code := DrainSubject(args, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}
