// Package demo starts the services `healthctl demo` probes: real servers on
// loopback that each fail in one real way, a DNS server that says .invalid
// names do not exist, and (Service) the process drain-test stops. It holds
// only what the demo shows; the tests' catalogue of faults is
// internal/fixture, which the shipped binary does not link. Nothing it
// starts listens anywhere but 127.0.0.1, nothing it runs sends a packet
// elsewhere, and no private key is ever written to disk; Close stops it
// all and removes its temporary directory.
package demo

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Ports is how many ports the demo uses from Options.PortBase on: the DNS
// server (UDP), seven probed services, the wait-healthy example, the two
// watch targets and the two drain-test subjects.
const Ports = 13

// Options configures Start.
type Options struct {
	// PortBase, when > 0, puts the services on 127.0.0.1 ports PortBase to
	// PortBase+Ports-1 instead of ports the system picks.
	PortBase int
}

// CheckPortBase says what is wrong with a port base, or nil.
func CheckPortBase(base int) error {
	if base < 0 || base > 65536-Ports {
		return fmt.Errorf("want a port from 1 to %d (the demo uses %d ports from it), or 0 for ports the system picks", 65536-Ports, Ports)
	}
	return nil
}

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
	// CAFile is the demo CA's certificate, for --cacert.
	CAFile   string
	Services []Service

	opts    Options
	pki     *pki
	mu      sync.Mutex
	next    int // the next port offset from PortBase
	cleanup []func()
	closed  bool
}

func (l *Lab) onClose(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cleanup = append(l.cleanup, f)
}

// Close stops every service, last started first, and removes the
// temporary directory. It is safe to call more than once.
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

// addr is the listen address of the next service: the next port from
// PortBase, or port 0 (the system picks).
func (l *Lab) addr() string {
	if l.opts.PortBase == 0 {
		return loopback + ":0"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.opts.PortBase + l.next
	l.next++
	return net.JoinHostPort(loopback, strconv.Itoa(p))
}

// portErr names the port range when a chosen port was taken.
func (l *Lab) portErr(err error) error {
	if l.opts.PortBase == 0 {
		return err
	}
	return fmt.Errorf("%v (--port-base %d uses ports %d to %d)", err, l.opts.PortBase, l.opts.PortBase, l.opts.PortBase+Ports-1)
}

// FreePort returns the next loopback address nothing listens on now, for a
// service the demo starts as its own process.
func (l *Lab) FreePort() (string, error) {
	ln, err := net.Listen("tcp4", l.addr())
	if err != nil {
		return "", l.portErr(err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Start starts the demo services in a new temporary directory.
func Start(opts Options) (_ *Lab, err error) {
	if err := CheckPortBase(opts.PortBase); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "healthctl-demo-")
	if err != nil {
		return nil, err
	}
	l := &Lab{Dir: dir, opts: opts}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	dns, err := startDNS(l.addr())
	if err != nil {
		return nil, l.portErr(err)
	}
	l.onClose(dns.close)
	l.DNS = dns.addr
	if l.pki, err = newPKI(dir); err != nil {
		return nil, err
	}
	l.CAFile = l.pki.caFile
	expired, err := l.pki.leaf(true, false)
	if err != nil {
		return nil, err
	}
	selfSigned, err := l.pki.leaf(false, true)
	if err != nil {
		return nil, err
	}
	for _, s := range []struct {
		name string
		a    answer
		args []string
	}{
		{"healthy", answer{body: `{"status":"ready"}`}, nil},
		{"warming up (503)", answer{status: 503, retryAfter: "2", body: "warming up\n"}, nil},
		{"redirects to another site", answer{redirect: "http://login.other.invalid/sso"}, nil},
		{"nothing listens", answer{}, nil},
		{"hangs after the request", answer{hang: true}, []string{"--read-timeout", "1s"}},
		{"self-signed certificate", answer{cert: &selfSigned}, nil},
		{"expired certificate", answer{cert: &expired}, []string{"--cacert", l.CAFile}},
	} {
		if s.name == "nothing listens" {
			addr, err := l.FreePort()
			if err != nil {
				return nil, err
			}
			l.Services = append(l.Services, Service{Name: s.name, URL: "http://" + addr + "/health"})
			continue
		}
		h, err := startHTTP(l.addr(), s.a)
		if err != nil {
			return nil, l.portErr(err)
		}
		l.onClose(h.close)
		l.Services = append(l.Services, Service{Name: s.name, URL: h.url + "/health", Args: s.args})
	}
	l.Services = append(l.Services, Service{Name: "name does not exist", URL: "http://nx.invalid/health", Args: []string{"--dns-server", l.DNS}})
	return l, nil
}

// StartWarming starts a service that answers 503 (Retry-After: 1) until
// warmup has passed, then 200, as a container does while it starts, and
// returns its URL.
func (l *Lab) StartWarming(warmup time.Duration) (string, error) {
	if warmup <= 0 {
		return "", errors.New("demo: warmup must be positive")
	}
	h, err := startHTTP(l.addr(), answer{warmup: warmup, retryAfter: "1"})
	if err != nil {
		return "", l.portErr(err)
	}
	l.onClose(h.close)
	return h.url + "/health", nil
}

// Fleet is the watch example: two targets whose state the demo switches
// between sweeps, and the targets file that names them.
type Fleet struct {
	Blip, Outage *Switch
	TargetsFile  string
	StateFile    string
}

// StartFleet starts the watch example's two services (both up) and writes
// its targets file.
func (l *Lab) StartFleet() (*Fleet, error) {
	f := &Fleet{TargetsFile: filepath.Join(l.Dir, "targets.yaml"), StateFile: filepath.Join(l.Dir, "state.json")}
	for _, sw := range []**Switch{&f.Blip, &f.Outage} {
		s, err := startSwitch(l.addr())
		if err != nil {
			return nil, l.portErr(err)
		}
		l.onClose(s.close)
		*sw = s
	}
	yaml := "targets:\n" +
		"  - name: checkout\n    url: " + f.Blip.URL() + "/health\n" +
		"  - name: billing\n    url: " + f.Outage.URL() + "/health\n"
	if err := os.WriteFile(f.TargetsFile, []byte(yaml), 0o644); err != nil {
		return nil, err
	}
	return f, nil
}
