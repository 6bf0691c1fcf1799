package main

import (
	"net"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

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
	// envfile VAR FILE sets VAR to FILE's content without its final newline:
	// the way to put a newline into a variable (testscript's env cannot).
	extraCmds["envfile"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: envfile VAR FILE")
		}
		ts.Setenv(args[0], strings.TrimSuffix(ts.ReadFile(args[1]), "\n"))
	}
}
