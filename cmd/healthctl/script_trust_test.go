// Script commands for the hostile servers (testdata/script/*_hold_*.txtar,
// *_h2_*.txtar, probe_proxy_*.txtar, probe_dns_resolver_*.txtar,
// probe_tls_*.txtar):
//
//	holdd NAME 101|1xx|body|413
//	    an HTTP/1.1 server that answers each request as its mode says
//	    (101 Switching Protocols; 100 Continue then 102 Processing every
//	    200ms; 200 with a body that never ends) and then holds the
//	    connection. Sets $NAME_URL, $NAME_HOSTPORT, $NAME_PORT.
//	h2hostile NAME window0|window0-silent|window0-end|noread|noread-ping|nodata [-h2c]
//	    an HTTP/2 server written frame by frame (h2fixture): over TLS with
//	    the script's PKI (sets $NAME_CA), or cleartext with prior knowledge
//	    (-h2c). Sets $NAME_URL, $NAME_HOSTPORT, $NAME_PORT.
//	badproxy NAME silent|407|403|squid503|502|close
//	    an HTTP proxy that answers every request (CONNECT or forwarded)
//	    with that fault and never connects anywhere. Sets $NAME_URL.
//	tlsfault NAME tls10|muststaple|clientcert12|alert|stapled|revoked|unknownstaple|stalestaple|wrongorder
//	    an HTTPS server with one TLS fault (tlsfix.TLSFault); sets
//	    $NAME_URL, $NAME_CA, $NAME_CERT, $NAME_KEY (a client certificate).
//	bigfile FILE SIZE
//	    writes SIZE bytes (e.g. 4MiB) of filler to FILE.
//	within MAX N CMD [ARGS...]
//	    runs CMD like exitcode N, and fails unless it ended within MAX
//	    plus loadSlack (MAX is the bound on an idle machine; each script's
//	    MAX plus the slack stays below the window or hang it rules out).
//	sigwithin [-requests NAME] [-after D] BG SIG MAX N
//	    waits (10s at most) until the server NAME (holdd, h2hostile) has
//	    read a request and BG has run for D, sends SIG (INT or TERM) to the
//	    background process BG (bgstart), and fails unless BG exits with N
//	    within MAX (plus loadSlack) of it.
package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/h2fixture"
	"github.com/healthctl/healthctl/internal/fixture/hostile"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/fixture/tlsfix"
)

func init() {
	extraCmds["holdd"] = cmdHoldd
	extraCmds["h2hostile"] = cmdH2Hostile
	extraCmds["badproxy"] = cmdBadProxy
	extraCmds["tlsfault"] = cmdTLSFault
	extraCmds["bigfile"] = cmdBigFile
	extraCmds["within"] = cmdWithin
	extraCmds["sigwithin"] = cmdSigWithin
	extraSetup = append(extraSetup, func(env *testscript.Env) error {
		env.Values[rawServersKey{}] = &rawServers{m: map[string]*hostile.RawServer{}}
		return nil
	})
}

// rawServersKey is the Env.Values key of a script's hostile servers.
type rawServersKey struct{}

type rawServers struct {
	mu sync.Mutex
	m  map[string]*hostile.RawServer
}

func keepRaw(ts *testscript.TestScript, name string, s *hostile.RawServer) {
	all := ts.Value(rawServersKey{}).(*rawServers)
	all.mu.Lock()
	all.m[name] = s
	all.mu.Unlock()
}

func cmdHoldd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "holdd")
	if len(args) != 2 {
		ts.Fatalf("usage: holdd NAME 101|1xx|body|413")
	}
	s, err := hostile.NewHoldServer(cleaner(ts), nil, hostile.HoldMode(args[1]))
	ts.Check(err)
	keepRaw(ts, args[0], s)
	setAddrVars(ts, args[0], "http://"+s.Addr, s.Addr, s.Port)
}

func cmdH2Hostile(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "h2hostile")
	const usage = "usage: h2hostile NAME window0|window0-silent|window0-end|noread|noread-ping|nodata [-h2c]"
	if len(args) < 2 || len(args) > 3 || (len(args) == 3 && args[2] != "-h2c") {
		ts.Fatalf(usage)
	}
	var s *h2fixture.Server
	var err error
	scheme := "http"
	if len(args) == 3 {
		s, err = h2fixture.New(cleaner(ts), h2fixture.Mode(args[1]), nil)
	} else {
		pki := state(ts).PKI(ts)
		cert, cerr := pki.ServerCertificate(pkifix.CertGood)
		ts.Check(cerr)
		s, err = h2fixture.New(cleaner(ts), h2fixture.Mode(args[1]), &cert)
		ts.Setenv(args[0]+"_CA", pki.CAFile)
		scheme = "https"
	}
	ts.Check(err)
	keepRaw(ts, args[0], s.RawServer)
	setAddrVars(ts, args[0], scheme+"://"+s.Addr, s.Addr, s.Port)
}

func cmdBadProxy(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "badproxy")
	if len(args) != 2 {
		ts.Fatalf("usage: badproxy NAME silent|407|403|squid503|502|close")
	}
	s, err := hostile.NewBadProxy(cleaner(ts), nil, hostile.ProxyFault(args[1]))
	ts.Check(err)
	keepRaw(ts, args[0], s)
	setAddrVars(ts, args[0], "http://"+s.Addr, s.Addr, s.Port)
}

func cmdTLSFault(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "tlsfault")
	if len(args) != 2 {
		ts.Fatalf("usage: tlsfault NAME tls10|muststaple|clientcert12|alert|stapled|revoked|unknownstaple|stalestaple|wrongorder")
	}
	pki := state(ts).PKI(ts)
	s, err := tlsfix.NewTLSFaultServer(cleaner(ts), pki, tlsfix.TLSFault(args[1]))
	ts.Check(err)
	setAddrVars(ts, args[0], "https://"+s.Addr, s.Addr, s.Port)
	ts.Setenv(args[0]+"_CA", pki.CAFile)
	ts.Setenv(args[0]+"_CERT", pki.ClientCertFile)
	ts.Setenv(args[0]+"_KEY", pki.ClientKeyFile)
}

func cmdBigFile(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "bigfile")
	if len(args) != 2 {
		ts.Fatalf("usage: bigfile FILE SIZE")
	}
	n, err := parseSize(args[1]) // script_files_test.go's
	if err != nil || n < 0 || n > 256<<20 {
		ts.Fatalf("bigfile: size %q: want N, NKiB or NMiB up to 256MiB", args[1])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Repeat("x", int(n))), 0o644))
}

func cmdWithin(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "within")
	const usage = "usage: within MAX N CMD [ARGS...]"
	if len(args) < 3 {
		ts.Fatalf(usage)
	}
	max, err := time.ParseDuration(args[0])
	if err != nil {
		ts.Fatalf("%s: %v", usage, err)
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("%s: %v", usage, err)
	}
	start := time.Now()
	err = ts.Exec(args[2], args[3:]...)
	took := time.Since(start)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("within: running %s: %v", args[2], err)
		}
		got = ee.ExitCode()
	}
	ts.Logf("within: %s exited %d after %v (limit %v)", args[2], got, took.Round(time.Millisecond), max)
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[2], got, want)
	}
	if took > max+loadSlack {
		ts.Fatalf("%s took %v, more than %v (and %v for a loaded machine)", args[2], took.Round(time.Millisecond), max, loadSlack)
	}
}

// loadSlack is what within and sigwithin allow past their bound: on a
// loaded machine (two CPU hogs beside the suite) a process starts and
// exits a second or more late. The scripts' bounds rule out a window of
// 10 s or a hold for ever, which stay well past MAX plus the slack.
const loadSlack = 4 * time.Second

func cmdSigWithin(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "sigwithin")
	const usage = "usage: sigwithin [-requests NAME] [-after D] BG INT|TERM MAX N"
	var srv *hostile.RawServer
	var after time.Duration
	for len(args) > 1 && (args[0] == "-requests" || args[0] == "-after") {
		if args[0] == "-after" {
			d, err := time.ParseDuration(args[1])
			if err != nil {
				ts.Fatalf(usage)
			}
			after, args = d, args[2:]
			continue
		}
		all := ts.Value(rawServersKey{}).(*rawServers)
		all.mu.Lock()
		srv = all.m[args[1]]
		all.mu.Unlock()
		if srv == nil {
			ts.Fatalf("sigwithin: no server %q", args[1])
		}
		args = args[2:]
	}
	if len(args) != 4 {
		ts.Fatalf(usage)
	}
	p := bgLookup(ts, args[0])
	sig := map[string]os.Signal{"INT": os.Interrupt, "TERM": syscall.SIGTERM}[args[1]]
	max, err := time.ParseDuration(args[2])
	if sig == nil || err != nil {
		ts.Fatalf(usage)
	}
	if srv != nil && !fixture.WaitFor(10*time.Second, func() bool { return srv.Requests() > 0 }) {
		ts.Fatalf("sigwithin: %s read no request within 10s", args[0])
	}
	time.Sleep(time.Until(p.started.Add(after)))
	select {
	case <-p.exited:
		ts.Fatalf("sigwithin: %s exited before the signal", p.name)
	default:
	}
	ts.Check(p.cmd.Process.Signal(sig))
	start := time.Now()
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
		ts.Fatalf("sigwithin: %s still running 10s after SIG%s", p.name, args[1])
	}
	took := time.Since(start)
	ts.Logf("sigwithin: %s exited %d %v after SIG%s", p.name, p.cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), args[1])
	if got := strconv.Itoa(p.cmd.ProcessState.ExitCode()); got != args[3] {
		ts.Fatalf("sigwithin: %s exited with %s, want %s", p.name, got, args[3])
	}
	if took > max+loadSlack {
		ts.Fatalf("sigwithin: %s took %v after SIG%s, more than %v (and %v for a loaded machine)", p.name, took.Round(time.Millisecond), args[1], max, loadSlack)
	}
}
