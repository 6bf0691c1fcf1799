package main

import (
	"crypto/tls"
	"net"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/fixture/proxyfix"
)

// Commands for the dialling scripts:
//
//	blackhole NAME ADDR PORT
//	    a listener on ADDR:PORT (a loopback address such as 127.0.0.2 or ::1)
//	    whose accept queue is full, so connects to it hang until the client
//	    gives up: a black-holed address. With a server on another address
//	    of the same port, two4.invalid:PORT or dual.invalid:PORT has one
//	    address that never answers. Sets $NAME_URL, $NAME_HOSTPORT, $NAME_PORT.
func init() {
	extraCmds["blackhole"] = cmdBlackhole
}

// cmdBlackhole implements blackhole NAME ADDR PORT.
func cmdBlackhole(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "blackhole")
	if len(args) != 3 {
		ts.Fatalf("usage: blackhole NAME ADDR PORT")
	}
	port, err := strconv.Atoi(args[2])
	if err != nil {
		ts.Fatalf("usage: blackhole NAME ADDR PORT: %v", err)
	}
	b, err := fixture.NewBacklogAt(cleaner(ts), args[1], port)
	ts.Check(err)
	setAddrVars(ts, args[0], b.URL(), b.Addr, b.Port)
}

// Proxies:
//
//	proxy NAME [-socks5 [-reply CODE]]
//	    a loopback proxy that only connects to loopback: an HTTP proxy
//	    (forwards plain-HTTP requests, opens CONNECT tunnels), or with
//	    -socks5 a SOCKS5 proxy (no authentication; a failed CONNECT gets
//	    the reply a real one sends: 5 refused, 4/3 unreachable, 2 not
//	    loopback, 1 otherwise; -reply CODE answers every CONNECT with
//	    CODE). Sets $NAME_URL
//	    (http://127.0.0.1:PORT or socks5://127.0.0.1:PORT), $NAME_HOSTPORT,
//	    $NAME_PORT.
func init() {
	extraCmds["proxy"] = cmdProxy
	extraCmds["httpsproxy"] = cmdHTTPSProxy
}

// cmdProxy implements proxy NAME [-socks5 [-reply CODE]].
// cmdHTTPSProxy: httpsproxy NAME good|wrongname|selfsigned|plain [HOST]
// starts the HTTP proxy behind TLS with the script's PKI's certificate of
// that kind (plain: no TLS, though $NAME_URL says https://), on HOST
// (default 127.0.0.1; 127.0.0.2 is covered by the wrongname certificate
// only); sets $NAME_URL (https://HOST:PORT), $NAME_HOSTPORT, $NAME_PORT
// and $NAME_CA.
func cmdHTTPSProxy(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "httpsproxy")
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: httpsproxy NAME good|wrongname|selfsigned|plain [HOST]")
	}
	host := "127.0.0.1"
	if len(args) == 3 {
		host = args[2]
	}
	pki := state(ts).PKI(ts)
	var cert *tls.Certificate
	if args[1] != "plain" {
		c, err := pki.ServerCertificate(pkifix.CertKind(args[1]))
		ts.Check(err)
		cert = &c
	}
	p, err := proxyfix.NewHTTPSProxy(cleaner(ts), cert, host)
	ts.Check(err)
	_, port, _ := net.SplitHostPort(p.Addr)
	n, _ := strconv.Atoi(port)
	setAddrVars(ts, args[0], p.URL, p.Addr, n)
	ts.Setenv(args[0]+"_CA", pki.CAFile)
}

func cmdProxy(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "proxy")
	usage := "usage: proxy NAME [-socks5 [-reply CODE]]"
	if len(args) < 1 || len(args) > 4 || (len(args) >= 2 && args[1] != "-socks5") || len(args) == 3 ||
		(len(args) == 4 && args[2] != "-reply") {
		ts.Fatalf("%s", usage)
	}
	var (
		p   *proxyfix.Proxy
		err error
	)
	switch len(args) {
	case 4:
		code, cerr := strconv.Atoi(args[3])
		if cerr != nil || code < 1 || code > 255 {
			ts.Fatalf("%s", usage)
		}
		p, err = proxyfix.NewSOCKS5Reply(cleaner(ts), byte(code))
	case 2:
		p, err = proxyfix.NewSOCKS5(cleaner(ts))
	default:
		p, err = proxyfix.NewHTTPProxy(cleaner(ts))
	}
	ts.Check(err)
	_, port, _ := net.SplitHostPort(p.Addr)
	n, _ := strconv.Atoi(port)
	setAddrVars(ts, args[0], p.URL, p.Addr, n)
}
