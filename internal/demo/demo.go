// Package demo starts the services `healthctl demo` probes: real servers on
// loopback that each fail in one real way, and a DNS server that answers
// .invalid names. Nothing it starts listens anywhere but 127.0.0.1, and
// nothing it runs sends a packet elsewhere; Close stops it all.
package demo

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/fixture"
)

// Service is one demo service and what a user would run against it.
type Service struct {
	// Name says what is wrong with it, in a few words.
	Name string
	URL  string
	// Args are the probe flags it needs besides the URL (--dns-server,
	// --cacert, a shorter window for the one that hangs).
	Args []string
}

// Lab is the running set of demo services.
type Lab struct {
	Dir string
	// DNS is the loopback DNS server's address, for --dns-server.
	DNS string
	// CAFile is the demo CA, for --cacert.
	CAFile   string
	Services []Service
	// WarmingURL answers 503 (Retry-After: 1) until Warmup has passed since
	// StartWarming, then 200: the wait-healthy example.
	WarmingURL string

	pki     *fixture.PKI
	mu      sync.Mutex
	cleanup []func()
	closed  bool
}

// Cleanup registers f to run at Close (the Lab is the fixtures' Cleaner).
func (l *Lab) Cleanup(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cleanup = append(l.cleanup, f)
}

// Close stops every service, last started first, and removes the
// temporary directory.
func (l *Lab) Close() {
	l.mu.Lock()
	fs := l.cleanup
	l.cleanup = nil
	done := l.closed
	l.closed = true
	l.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	if !done && l.Dir != "" {
		os.RemoveAll(l.Dir)
	}
}

// Start starts the demo services in a new temporary directory.
func Start() (l *Lab, err error) {
	dir, err := os.MkdirTemp("", "healthctl-demo-")
	if err != nil {
		return nil, err
	}
	l = &Lab{Dir: dir}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	dns, err := fixture.NewDNSServer(l)
	if err != nil {
		return nil, err
	}
	l.DNS = dns.Addr
	if l.pki, err = fixture.NewPKI(filepath.Join(dir, "pki")); err != nil {
		return nil, err
	}
	l.CAFile = l.pki.CAFile
	dnsArgs := []string{"--dns-server", l.DNS}

	add := func(name string, o fixture.HTTPOptions, path string, args ...string) error {
		s, err := fixture.NewHTTPServer(l, o)
		if err != nil {
			return err
		}
		l.Services = append(l.Services, Service{Name: name, URL: s.URL + path, Args: args})
		return nil
	}
	steps := []func() error{
		func() error { return add("healthy", fixture.HTTPOptions{Body: `{"status":"ready"}`}, "/health") },
		func() error {
			return add("warming up (503)", fixture.HTTPOptions{Status: 503, RetryAfter: "2", Body: "warming up\n"}, "/health")
		},
		func() error {
			return add("redirects to another site", fixture.HTTPOptions{Redirect: "http://login.other.invalid/sso"}, "/health")
		},
		func() error {
			p, err := fixture.NewClosedPort(l)
			if err != nil {
				return err
			}
			l.Services = append(l.Services, Service{Name: "nothing listens", URL: p.URL() + "/health"})
			return nil
		},
		func() error {
			return add("hangs after the request", fixture.HTTPOptions{Mode: fixture.ModeHang}, "/health", "--read-timeout", "1s")
		},
		func() error {
			return add("self-signed certificate", fixture.HTTPOptions{TLS: fixture.TLSSelfSigned, PKI: l.pki}, "/health")
		},
		func() error {
			return add("expired certificate", fixture.HTTPOptions{TLS: fixture.TLSExpired, PKI: l.pki}, "/health", "--cacert", l.CAFile)
		},
		func() error {
			l.Services = append(l.Services, Service{Name: "name does not exist", URL: "http://nx.invalid/health", Args: dnsArgs})
			return nil
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// StartWarming starts a service that answers 503 for warmup, then 200, as
// seeds/000's mock container does, and returns its URL.
func (l *Lab) StartWarming(warmup time.Duration) (string, error) {
	if warmup <= 0 {
		return "", errors.New("demo: warmup must be positive")
	}
	s, err := fixture.NewHTTPServer(l, fixture.HTTPOptions{SwitchAfter: warmup, RetryAfter: "1"})
	if err != nil {
		return "", err
	}
	return s.URL + "/health", nil
}

// FreePort returns a loopback address with a port nothing listens on now,
// for a service the demo starts as its own process.
func FreePort() (string, error) {
	l, err := net.Listen("tcp4", fixture.Loopback4+":0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Fleet is the watch example: two targets whose state the demo switches
// between sweeps, and the targets file that names them.
type Fleet struct {
	Blip, Outage *fixture.Switch
	TargetsFile  string
	StateFile    string
}

// StartFleet starts the watch example's two services (both up) and writes
// its targets file.
func (l *Lab) StartFleet() (*Fleet, error) {
	f := &Fleet{TargetsFile: filepath.Join(l.Dir, "targets.yaml"), StateFile: filepath.Join(l.Dir, "state.json")}
	var err error
	if f.Blip, err = fixture.NewSwitch(l, fixture.SwitchUp); err != nil {
		return nil, err
	}
	if f.Outage, err = fixture.NewSwitch(l, fixture.SwitchUp); err != nil {
		return nil, err
	}
	yaml := "targets:\n" +
		"  - name: checkout\n    url: " + f.Blip.URL() + "/health\n" +
		"  - name: billing\n    url: " + f.Outage.URL() + "/health\n"
	if err := os.WriteFile(f.TargetsFile, []byte(yaml), 0o644); err != nil {
		return nil, err
	}
	return f, nil
}
