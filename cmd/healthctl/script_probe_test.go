package main

import (
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
)

// Commands and conditions of the probe scripts:
//
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
	extraCmds["hangv6"] = cmdHangV6
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
