package main

import (
	"flag"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
)

// Commands and conditions of the probe scripts:
//
//	httprec NAME [-record FILE] [-size N] [-status N] [-body S] [-redirect URL] [-tls good] [-6]
//	    an HTTP(S) fixture like httpd's normal mode that can also record every
//	    request it receives into FILE (a "METHOD TARGET" line, "Host: h", the
//	    headers sorted, an empty line; rewritten atomically per request) and
//	    serve a body of N bytes (-size; filler, then -body as the last bytes).
//	    Sets the same variables as httpd.
//	hangv6 NAME PORT
//	    a listener on [::1]:PORT that never accepts (connects hang); with a
//	    server on 127.0.0.1:PORT, dual.invalid:PORT has one hanging family.
//	[ipv6]            the IPv6 loopback ::1 can be listened on.
//	[hosts4localhost] the hosts file maps localhost to 127.0.0.1 and not to ::1.
func init() {
	// [ipv6] holds when the IPv6 loopback ::1 can be listened on.
	extraConds["ipv6"] = func() (bool, error) {
		l, err := net.Listen("tcp6", "[::1]:0")
		if err != nil {
			return false, nil
		}
		l.Close()
		return true, nil
	}
	extraConds["hosts4localhost"] = hosts4Localhost
	// envfile VAR FILE sets VAR to FILE's content without its final newline:
	// the way to put a newline into a variable (testscript's env cannot).
	extraCmds["envfile"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: envfile VAR FILE")
		}
		ts.Setenv(args[0], strings.TrimSuffix(ts.ReadFile(args[1]), "\n"))
	}
	extraCmds["httprec"] = cmdHTTPRec
	extraCmds["hangv6"] = cmdHangV6
}

const httprecUsage = "usage: httprec NAME [-record FILE] [-size N] [-status N] [-body S] [-redirect URL] [-tls good] [-6]"

// cmdHTTPRec implements httprec (see above).
func cmdHTTPRec(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "httprec")
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf("%s", httprecUsage)
	}
	name := args[0]
	var (
		opts        fixture.HTTPOptions
		tls, record string
	)
	fs := flag.NewFlagSet("httprec", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	fs.StringVar(&record, "record", "", "")
	fs.Int64Var(&opts.BodySize, "size", 0, "")
	fs.IntVar(&opts.Status, "status", 0, "")
	fs.StringVar(&opts.Body, "body", "", "")
	fs.StringVar(&opts.Redirect, "redirect", "", "")
	fs.StringVar(&tls, "tls", "", "")
	fs.BoolVar(&opts.IPv6, "6", false, "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		ts.Fatalf("httprec: %v\n%s", err, httprecUsage)
	}
	opts.TLS = fixture.TLSMode(tls)
	if opts.TLS != fixture.TLSNone {
		opts.PKI = state(ts).PKI(ts)
	}
	if record != "" {
		opts.RecordFile = ts.MkAbs(record)
	}
	s, err := fixture.NewHTTPServer(cleaner(ts), opts)
	if err != nil {
		ts.Fatalf("httprec %s: %v", name, err)
	}
	setAddrVars(ts, name, s.URL, s.Addr, s.Port)
	if opts.PKI != nil {
		ts.Setenv(name+"_CA", opts.PKI.CAFile)
	}
}

// cmdHangV6 implements hangv6 NAME PORT.
func cmdHangV6(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "hangv6")
	if len(args) != 2 {
		ts.Fatalf("usage: hangv6 NAME PORT")
	}
	port, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("usage: hangv6 NAME PORT: %v", err)
	}
	b, err := fixture.NewBacklogAt(cleaner(ts), fixture.Loopback6, port)
	ts.Check(err)
	setAddrVars(ts, args[0], b.URL(), b.Addr, b.Port)
}

// hosts4Localhost reports whether /etc/hosts gives localhost an IPv4
// address and no IPv6 one.
func hosts4Localhost() (bool, error) {
	b, err := os.ReadFile("/etc/hosts")
	if err != nil {
		return false, nil
	}
	v4, v6 := false, false
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		for _, n := range f[1:] {
			if n == "localhost" {
				if strings.Contains(f[0], ":") {
					v6 = true
				} else {
					v4 = true
				}
			}
		}
	}
	return v4 && !v6, nil
}
