// Script commands for the fleet-sized watch scripts
// (testdata/script/watch_every_run.txtar):
//
//	usersfleet FILE N [SERVERS]
//	    starts SERVERS (default 4) HTTP servers on 127.0.0.1 port 0 that
//	    answer each entry's path 200 "ok", and writes FILE: N targets over them in
//	    turn, in the shapes people write (a commented header and defaults;
//	    block entries, flow mappings with quoted URLs, commented entries
//	    with quoted scalars and a header, block entries with a header list,
//	    a Host of their own among it, and an expectation), named svc-0 …
//	    svc-N-1. The servers answer 400 to a request without its entry's
//	    headers, or with another entry's. Several servers spread
//	    the fleet's connections over several loopback ports (a run of
//	    20,000 fresh connections to one port is most of the ephemeral
//	    range). The servers stop when the script ends.
//
// A fleet-sized script sizes its fleet down under [race]
// (script_body_test.go): ~5x slower a probe.
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	extraCmds["usersfleet"] = cmdUsersFleet
}

func cmdUsersFleet(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "usersfleet")
	if len(args) != 2 && len(args) != 3 {
		ts.Fatalf("usage: usersfleet FILE N [SERVERS]")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 1 {
		ts.Fatalf("usersfleet: N %q: want a positive count", args[1])
	}
	servers := 4
	if len(args) == 3 {
		if servers, err = strconv.Atoi(args[2]); err != nil || servers < 1 || servers > 64 {
			ts.Fatalf("usersfleet: SERVERS %q: want 1 to 64", args[2])
		}
	}
	hostports := make([]string, servers)
	for i := range hostports {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		ts.Check(err)
		srv := &http.Server{Handler: http.HandlerFunc(fleetHandler), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(l)
		ts.Defer(func() { srv.Close() })
		hostports[i] = l.Addr().String()
	}
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	w := bufio.NewWriter(f)
	writeUsersFleet(w, n, hostports)
	ts.Check(w.Flush())
	ts.Check(f.Close())
}

// fleetHandler answers 200 "ok" to a request that carries the headers
// writeUsersFleet gave its entry, and nothing of another entry's (a Host
// and X-Team of its own, X-Probe, or none), 400 to any other: a header
// sent to the wrong target, or not sent, fails that target.
func fleetHandler(w http.ResponseWriter, r *http.Request) {
	var i int
	if _, err := fmt.Sscanf(r.URL.Path, "/svc/%d/health", &i); err != nil {
		http.Error(w, "not a fleet path", http.StatusNotFound)
		return
	}
	wantHost, team, probe := r.Host, "", ""
	switch i % 4 {
	case 2:
		probe = "1"
	case 3:
		wantHost, team = fmt.Sprintf("svc-%d.fleet.invalid", i), fmt.Sprintf("t%d", i%7)
	}
	if r.Host != wantHost || r.Header.Get("X-Team") != team || r.Header.Get("X-Probe") != probe {
		http.Error(w, fmt.Sprintf("svc-%d: Host %q X-Team %q X-Probe %q", i, r.Host, r.Header.Get("X-Team"), r.Header.Get("X-Probe")), http.StatusBadRequest)
		return
	}
	io.WriteString(w, "ok\n")
}

// writeUsersFleet writes n targets over hostports, in turn, in the shapes
// people write (SPEC §10): the benchmarks' users' shape
// (scripts/benchwatch -shape users).
func writeUsersFleet(w io.Writer, n int, hostports []string) {
	io.WriteString(w, "# the fleet, one entry per service\ndefaults:\n  max_time: 5s\ntargets:\n")
	for i := range n {
		u := fmt.Sprintf("http://%s/svc/%d/health", hostports[i%len(hostports)], i)
		switch i % 4 {
		case 0:
			fmt.Fprintf(w, "  - name: svc-%d\n    url: %s\n", i, u)
		case 1:
			fmt.Fprintf(w, "  - {name: svc-%d, url: %q}\n", i, u)
		case 2:
			fmt.Fprintf(w, "  # team %d\n  - name: \"svc-%d\"\n    url: '%s'   # behind the LB\n    headers: [\"X-Probe: 1\"]\n", i%7, i, u)
		case 3:
			fmt.Fprintf(w, "  - name: svc-%d\n    url: \"%s\"\n    headers:\n      - \"X-Team: t%d\"\n      - \"Host: svc-%d.fleet.invalid\"\n    expect_status: 2xx\n", i, u, i%7, i)
		}
	}
}
