// Script commands for the gRPC, TCP, TLS and h2c scripts
// (testdata/script/probe_grpc_*, wait_grpc_*, drain_grpc_*, probe_tcp_*,
// probe_tls_*, probe_h2c_*, watch_mixed_protocols):
//
//	grpcd NAME [-status S] [-service NAME=S]... [-no-health] [-tls KIND] [-switch-after D] [-max-recv N]
//	    grpc-go's own health server (google.golang.org/grpc/health, linked by
//	    the tests only) on 127.0.0.1 port 0. S is SERVING (default),
//	    NOT_SERVING, UNKNOWN or SERVICE_UNKNOWN, -status for the overall
//	    health (""), -service for a named one (any other name is unknown:
//	    NOT_FOUND); -no-health registers no health service (UNIMPLEMENTED);
//	    -tls KIND serves grpcs with the script CA's certificate of that kind
//	    (good, expired, wrongname, …); -switch-after D turns the overall
//	    health SERVING once D has passed; -max-recv N refuses request
//	    messages over N bytes (RESOURCE_EXHAUSTED, grpc-go's own). Sets $NAME_URL (grpc://HOST:PORT or
//	    grpcs://…), $NAME_HOSTPORT, $NAME_PORT, with -tls $NAME_CA.
//	grpcnode NAME [--status S] [--service NAME=S]... [--no-health] [--max-recv N]
//	    the Node server testdata/stacks/grpc-node/server.js (@grpc/grpc-js
//	    with grpc-health-check; needs `require node` and .ci/deps/grpc.sh's
//	    npm ci). Sets $NAME_URL, $NAME_HOSTPORT, $NAME_PORT.
//	grpcpy NAME [--status S] [--service NAME=S]... [--no-health] [--max-recv N]
//	    the Python server testdata/stacks/grpc-python/server.py (grpcio,
//	    Debian's python3-grpcio, run by /usr/bin/python3). Sets the same.
//	$GRPCDRAIN -addr HOST:PORT [-drain P] [-pidfile F] [-status S]
//	    grpc-go's health server as a process (this test binary re-executed):
//	    on SIGTERM it turns NOT_SERVING (health Shutdown), waits P, then
//	    GracefulStops; with -drain 0 it stops at once.
//	h2cd NAME [-status N]
//	    an HTTP server that speaks only cleartext HTTP/2 with prior
//	    knowledge (no HTTP/1, no upgrade), answering every request with N
//	    (default 200) and "ok". Sets $NAME_URL (http://…), $NAME_HOSTPORT,
//	    $NAME_PORT.
//	tcpd NAME [-banner TEXT | -raw TEXT]
//	    a plain TCP listener that accepts, writes TEXT (if given) and holds
//	    each connection until the peer closes it; -raw writes TEXT read with
//	    Go's escapes (\x00) once the peer has sent something, then closes.
//	    Sets $NAME_URL (tcp://…), $NAME_HOSTPORT, $NAME_PORT.
//	tlsd NAME [-cert KIND]
//	    a TLS-only listener (no HTTP) with the script CA's certificate of
//	    KIND (default good): it completes the handshake and holds the
//	    connection. Sets $NAME_URL (tls://…), $NAME_HOSTPORT, $NAME_PORT,
//	    $NAME_CA.
//
// Scripts with grpcpy name its stack first: require /usr/bin/python3 py:grpc.
package main

import (
	"bufio"
	"crypto/tls"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/grpcsrv"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
)

func init() {
	// The test binary re-executed through the grpcdrain link is the
	// drain fixture.
	if filepath.Base(os.Args[0]) == "grpcdrain" {
		os.Exit(grpcsrv.Main(os.Args[1:]))
	}
	extraCmds["grpcd"] = cmdGRPCD
	extraCmds["grpcnode"] = func(ts *testscript.TestScript, neg bool, args []string) {
		cmdGRPCStack(ts, neg, "grpcnode", "node", filepath.Join("testdata", "stacks", "grpc-node", "server.js"), args)
	}
	extraCmds["grpcpy"] = func(ts *testscript.TestScript, neg bool, args []string) {
		cmdGRPCStack(ts, neg, "grpcpy", "/usr/bin/python3", filepath.Join("testdata", "stacks", "grpc-python", "server.py"), args)
	}
	extraCmds["h2cd"] = cmdH2CD
	extraCmds["tcpd"] = cmdTCPD
	extraCmds["tlsd"] = cmdTLSD
	extraSetup = append(extraSetup, func(env *testscript.Env) error {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		dir := filepath.Join(env.WorkDir, ".grpcbin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		link := filepath.Join(dir, "grpcdrain")
		if err := os.Symlink(exe, link); err != nil {
			return err
		}
		env.Setenv("GRPCDRAIN", link)
		return nil
	})
}

// serviceFlags collects repeated -service NAME=STATUS flags.
type serviceFlags map[string]string

func (s serviceFlags) String() string { return "" }

func (s serviceFlags) Set(v string) error {
	name, st, _ := strings.Cut(v, "=")
	s[name] = st
	return nil
}

const grpcdUsage = "usage: grpcd NAME [-status S] [-service NAME=S]... [-no-health] [-tls KIND] [-switch-after D] [-max-recv N]"

// cmdGRPCD implements grpcd.
func cmdGRPCD(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "grpcd")
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf("%s", grpcdUsage)
	}
	name := args[0]
	var o grpcsrv.Options
	services := serviceFlags{}
	var kind string
	fs := flag.NewFlagSet("grpcd", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	fs.StringVar(&o.Status, "status", "", "")
	fs.Var(services, "service", "")
	fs.BoolVar(&o.NoHealth, "no-health", false, "")
	fs.StringVar(&kind, "tls", "", "")
	fs.DurationVar(&o.SwitchAfter, "switch-after", 0, "")
	fs.IntVar(&o.MaxRecv, "max-recv", 0, "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		ts.Fatalf("grpcd: %v\n%s", err, grpcdUsage)
	}
	o.Services = services
	scheme := "grpc"
	if kind != "" {
		p := state(ts).PKI(ts)
		cert, err := p.ServerCertificate(pkifix.CertKind(kind))
		ts.Check(err)
		o.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		scheme = "grpcs"
		ts.Setenv(name+"_CA", p.CAFile)
	}
	s, err := grpcsrv.Start(cleaner(ts), o)
	if err != nil {
		ts.Fatalf("grpcd %s: %v", name, err)
	}
	setAddrVarsFrom(ts, name, scheme, s.Addr)
}

// setAddrVarsFrom sets NAME_URL (scheme://addr), NAME_HOSTPORT and NAME_PORT.
func setAddrVarsFrom(ts *testscript.TestScript, name, scheme, addr string) {
	_, port, err := net.SplitHostPort(addr)
	ts.Check(err)
	n, err := strconv.Atoi(port)
	ts.Check(err)
	setAddrVars(ts, name, scheme+"://"+addr, addr, n)
}

// cmdGRPCStack implements grpcnode and grpcpy: it starts the stack's server
// script, waits for the address it writes, and kills it when the script ends.
func cmdGRPCStack(ts *testscript.TestScript, neg bool, cmdName, interp, script string, args []string) {
	noNeg(ts, neg, cmdName)
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf("usage: %s NAME [--status S] [--service NAME=S]... [--no-health]", cmdName)
	}
	name := args[0]
	src, err := filepath.Abs(filepath.Join("..", "..", script))
	ts.Check(err)
	addrFile := ts.MkAbs("." + strings.ToLower(name) + ".addr")
	cmd := exec.Command(interp, append([]string{src, addrFile}, args[1:]...)...)
	cmd.Env = scriptEnv(ts)
	cmd.Dir = filepath.Dir(src)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ts.Check(cmd.Start())
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	ts.Defer(func() {
		cmd.Process.Kill()
		<-done
	})
	var addr string
	ok := fixture.WaitFor(20*time.Second, func() bool {
		select {
		case <-done:
			return true
		default:
		}
		b, err := os.ReadFile(addrFile)
		addr = strings.TrimSpace(string(b))
		return err == nil && addr != ""
	})
	if !ok || addr == "" {
		select {
		case <-done:
			ts.Fatalf("%s %s: the server exited: %s", cmdName, name, stderr.String())
		default:
		}
		ts.Fatalf("%s %s: no address within 20s", cmdName, name)
	}
	setAddrVarsFrom(ts, name, "grpc", addr)
}

// cmdH2CD implements h2cd NAME [-status N].
func cmdH2CD(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "h2cd")
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf("usage: h2cd NAME [-status N]")
	}
	fs := flag.NewFlagSet("h2cd", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	status := fs.Int("status", 200, "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		ts.Fatalf("usage: h2cd NAME [-status N]")
	}
	l, err := net.Listen("tcp4", fixture.Loopback4+":0")
	ts.Check(err)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Proto", r.Proto)
			w.WriteHeader(*status)
			io.WriteString(w, "ok\n")
		}),
		Protocols:         new(http.Protocols),
		ReadHeaderTimeout: 10 * time.Second,
	}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(l)
	ts.Defer(func() { srv.Close() })
	setAddrVarsFrom(ts, args[0], "http", l.Addr().String())
}

// holdListener accepts on l until it is closed, handing each connection to
// serve; every connection is closed when the script ends.
func holdListener(ts *testscript.TestScript, l net.Listener, serve func(net.Conn)) {
	conns := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(conns)
				return
			}
			select {
			case conns <- c:
			default:
				c.Close()
				continue
			}
			go serve(c)
		}
	}()
	ts.Defer(func() {
		l.Close()
		for c := range conns {
			c.Close()
		}
	})
}

// cmdTCPD implements tcpd NAME [-banner TEXT | -raw TEXT].
func cmdTCPD(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "tcpd")
	const usage = "usage: tcpd NAME [-banner TEXT | -raw TEXT]"
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf(usage)
	}
	fs := flag.NewFlagSet("tcpd", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	banner := fs.String("banner", "", "")
	raw := fs.String("raw", "", "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 || (*banner != "" && *raw != "") {
		ts.Fatalf(usage)
	}
	rawBytes, err := strconv.Unquote(`"` + *raw + `"`)
	if err != nil {
		ts.Fatalf("tcpd -raw %q: %v", *raw, err)
	}
	l, err := net.Listen("tcp4", fixture.Loopback4+":0")
	ts.Check(err)
	holdListener(ts, l, func(c net.Conn) {
		if rawBytes != "" {
			// An answer to whatever came (a server that speaks another
			// protocol), then the close.
			buf := make([]byte, 4096)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if n, _ := c.Read(buf); n > 0 {
				io.WriteString(c, rawBytes)
			}
			c.Close()
			return
		}
		if *banner != "" {
			io.WriteString(c, *banner+"\r\n")
		}
		// Read (and drop) until the peer closes: the connection is held
		// open, as a service that speaks only when spoken to would.
		io.Copy(io.Discard, bufio.NewReader(c))
		c.Close()
	})
	setAddrVarsFrom(ts, args[0], "tcp", l.Addr().String())
}

// cmdTLSD implements tlsd NAME [-cert KIND].
func cmdTLSD(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "tlsd")
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf("usage: tlsd NAME [-cert KIND]")
	}
	fs := flag.NewFlagSet("tlsd", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	kind := fs.String("cert", string(pkifix.CertGood), "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		ts.Fatalf("usage: tlsd NAME [-cert KIND]")
	}
	p := state(ts).PKI(ts)
	cert, err := p.ServerCertificate(pkifix.CertKind(*kind))
	ts.Check(err)
	l, err := net.Listen("tcp4", fixture.Loopback4+":0")
	ts.Check(err)
	conf := &tls.Config{Certificates: []tls.Certificate{cert}}
	holdListener(ts, l, func(c net.Conn) {
		tc := tls.Server(c, conf)
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if tc.Handshake() == nil {
			tc.SetDeadline(time.Time{})
			io.Copy(io.Discard, tc)
		}
		c.Close()
	})
	setAddrVarsFrom(ts, args[0], "tls", l.Addr().String())
	ts.Setenv(args[0]+"_CA", p.CAFile)
}
