//go:build linux

// Linux only: peak RSS is getrusage's ru_maxrss, in KiB on Linux (bytes on
// macOS, absent on Windows); the benchmarks are measured on Linux.

// Command benchwatch measures one `healthctl watch --once` sweep over many
// loopback targets: it serves 200 on one loopback port (or uses -server's,
// e.g. nginx), writes a targets file (every target its own name and path;
// with -spread each its own address of 127.0.0.0/8), runs the sweep, and
// reports the wall time, CPU time and peak RSS of the healthctl process,
// the sweep's own duration and, with -state/-prom, how long the state file
// and the textfile took to write (the sweep line's state_write_ms and
// metrics_write_ms) and their sizes. With -ab it runs `ab -n N -c 64`
// against the same server in the same runs, alternating, and prints the
// ratio. With -floor it also runs the Go floor (-floor-client: this
// program as a minimal Go client that only dials, writes net/http's
// encoding of the request, parses the answer with net/http and closes,
// 64 at a time) in the same runs: what any Go prober pays on this machine
// before it does anything of its own. With -bare it also runs the bare
// floor (-bare-client: one fixed request written as bytes, the answer read
// to EOF, no HTTP parsing): what Go's net package and runtime cost here,
// apart from net/http's request and response. It stops by itself: each
// run is bounded by -timeout.
// scripts/bench-watch.sh and scripts/bench-watch-100k.sh run it.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	bin := flag.String("bin", "healthctl", "the healthctl binary (a comma list: runs alternate between them)")
	counts := flag.String("n", "1000,10000", "comma list of target counts, one sweep each")
	runs := flag.Int("runs", 3, "sweeps per count (the median is reported)")
	timeout := flag.Duration("timeout", 60*time.Second, "limit of one sweep")
	extra := flag.String("args", "", "extra watch arguments (space separated)")
	down := flag.Bool("down", false, "point every target at a port nothing listens on (a fleet failing at once: every probe refused, the fleet rule holding them), and want every target failed and the sweep's exit 8 or 9")
	server := flag.String("server", "", "host:port of a server answering 200 on every path (default: one of our own on 127.0.0.1)")
	spread := flag.Bool("spread", false, "give each target its own address of 127.0.0.0/8 (the server must listen on all of them; -addrs N)")
	addrs := flag.Int("addrs", 0, "spread the targets over `N` addresses across 127.0.0.0/8, in turn (the server must listen on all of them, e.g. 0.0.0.0; 0: -server's address only)")
	shape := flag.String("shape", "users", "the targets file's shape: users (block entries, flow mappings with quoted URLs, comments, headers per target, in turn: what people write), block (one plain key a line: what a generator writes) or headers (block entries each with a Host and an Authorization token of its own)")
	urlShape := flag.String("urls", "path", "how the targets' URLs differ: path (/env/N/health) or query (/health?full=1&env=N, every fourth with a token=SECRET of its own, redacted by name: the shape of many real health URLs)")
	withState := flag.Bool("state", false, "run with --state and --prom-file, and report their write times and sizes")
	repeat := flag.Int("repeat", 1, "with -state: `R` sweeps a round over the same state file (a cron fleet's runs 1, 2, 3...), each reported apart")
	withCurl := flag.Bool("curl", false, "also run `curl --parallel --parallel-max 64` over the same URLs as the sweep in the same runs and print the ratio")
	curlFresh := flag.Bool("curl-fresh", false, "also run that curl with `-H 'Connection: close'` (a connection per URL, as a probe dials) in the same runs and print the ratio")
	ab := flag.Bool("ab", false, "also run `ab -n N -c 64` against the server in the same runs (alternating) and print the ratio")
	floor := flag.Bool("floor", false, "also run the Go floor (-floor-client) against the server in the same runs and print the ratios")
	floorClient := flag.String("floor-client", "", "be the Go floor: `N,host:port`, N fresh-connection GETs, 64 at a time; exit 1 if one is not a 200")
	bare := flag.Bool("bare", false, "also run the bare floor (-bare-client) against the server in the same runs and print the ratios")
	bareClient := flag.String("bare-client", "", "be the bare floor: `N,host:port`, as -floor-client with the request written as fixed bytes and the answer read to EOF, not parsed")
	epoll := flag.Bool("epoll", false, "also run the epoll floor (-epoll-client) against the server in the same runs and print the ratios")
	epollClient := flag.String("epoll-client", "", "be the epoll floor: `N,host:port`, the bare floor's exchange as ab makes it: one thread, non-blocking sockets in one epoll set, no goroutine per connection")
	serverPID := flag.Int("server-pid", 0, "the server's `PID` (-server's: nginx's master), whose CPU time (its workers' included) is measured around each run; this process's own when it serves")
	measureOut := flag.String("measure", "", "be the measuring parent of one run: `FILE` gets the wall time and the rusage of the command (the arguments)")
	flag.Parse()
	if *measureOut != "" {
		measure(*measureOut, flag.Args())
		return
	}
	if *floorClient != "" {
		floorRun("-floor-client", *floorClient)
		return
	}
	if *bareClient != "" {
		floorRun("-bare-client", *bareClient)
		return
	}
	if *epollClient != "" {
		epollRun(*epollClient)
		return
	}
	meter := serverMeter{pid: *serverPID}

	hostport := *server
	if hostport == "" {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			fail(err)
		}
		var served atomic.Int64
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served.Add(1)
			w.Write([]byte("ok\n"))
		}), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(l)
		defer srv.Close()
		hostport = l.Addr().String()
		if meter.pid == 0 {
			meter.pid = os.Getpid()
		}
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		fail(fmt.Errorf("-server %q: %v", hostport, err))
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		fail(fmt.Errorf("-server %q: loopback addresses only", hostport))
	}

	if *spread {
		*addrs = -1
	}
	if *repeat < 1 || (*repeat > 1 && !*withState) {
		fail(fmt.Errorf("-repeat %d: want 1, or more with -state", *repeat))
	}
	if *shape != "users" && *shape != "block" && *shape != "headers" {
		fail(fmt.Errorf("-shape %q: want users, block or headers", *shape))
	}
	if *urlShape != "path" && *urlShape != "query" {
		fail(fmt.Errorf("-urls %q: want path or query", *urlShape))
	}
	dir, err := os.MkdirTemp("", "benchwatch")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	for _, c := range strings.Split(*counts, ",") {
		var n int
		if _, err := fmt.Sscan(c, &n); err != nil || n < 1 {
			fail(fmt.Errorf("-n: bad count %q", c))
		}
		file := filepath.Join(dir, fmt.Sprintf("targets-%d.yaml", n))
		tport := port
		if *down {
			tport = closedPort()
		}
		urls := writeTargets(file, host, tport, n, *addrs, *shape, *urlShape)
		fmt.Printf("%6d targets: file %s (%s shape, %s-shaped URLs, %.1f MB), %s\n", n, filepath.Base(file), *shape, *urlShape, float64(size(file))/1e6, spreadText(*addrs, n, host))
		curlCfg := filepath.Join(dir, fmt.Sprintf("curl-%d.cfg", n))
		if *withCurl {
			writeCurlConfig(curlCfg, urls)
		}
		// With several binaries (-bin a,b), runs alternate between them so
		// the machine's drift hits all alike; with -repeat each binary's
		// round is R sweeps over one state file, series b*R+k.
		bins := strings.Split(*bin, ",")
		var series []string
		for _, path := range bins {
			for k := range *repeat {
				name := path
				if *repeat > 1 {
					name = fmt.Sprintf("%s, run %d of %d on one state file", path, k+1, *repeat)
				}
				series = append(series, name)
			}
		}
		res := make([][]result, len(series))
		var abs, curls, freshCurls, floors, bares, epolls []result
		for run := range *runs {
			for b, path := range bins {
				st, prom := filepath.Join(dir, fmt.Sprintf("state-%d-%d.json", b, run)), filepath.Join(dir, fmt.Sprintf("metrics-%d-%d.prom", b, run))
				for k := range *repeat {
					args := strings.Fields(*extra)
					if *withState {
						args = append(args, "--state", st, "--prom-file", prom)
					}
					r, err := meter.around(func() (result, error) { return sweep(path, file, *timeout, args, *down) })
					if err != nil {
						fail(fmt.Errorf("run %d of %d on one state file: %v", k+1, *repeat, err))
					}
					if *down && r.fail != n {
						fail(fmt.Errorf("%s, %d targets, run %d of %d: %d failed, want all (-down)", path, n, k+1, *repeat, r.fail))
					}
					if !*down && r.pass != n {
						fail(fmt.Errorf("%s, %d targets, run %d of %d: %d passed", path, n, k+1, *repeat, r.pass))
					}
					if *withState {
						if err := whole(st, prom, n); err != nil {
							fail(fmt.Errorf("%s, %d targets, run %d: %v", path, n, k+1, err))
						}
						r.stateSize, r.promSize = size(st), size(prom)
					}
					res[b**repeat+k] = append(res[b**repeat+k], r)
				}
				os.Remove(st)
				os.Remove(prom)
			}
			// ab and the floors, each in the same round, the server's
			// CPU measured around each.
			for _, o := range []struct {
				on   bool
				into *[]result
				run  func() (result, error)
			}{
				{*ab, &abs, func() (result, error) { return runAB(n, urls[len(urls)/2], *timeout) }},
				{*withCurl, &curls, func() (result, error) { return runCurl(n, curlCfg, *timeout, false) }},
				{*curlFresh, &freshCurls, func() (result, error) { return runCurl(n, curlCfg, *timeout, true) }},
				{*floor, &floors, func() (result, error) { return runFloor("-floor-client", n, hostport, *timeout) }},
				{*bare, &bares, func() (result, error) { return runFloor("-bare-client", n, hostport, *timeout) }},
				{*epoll, &epolls, func() (result, error) { return runFloor("-epoll-client", n, hostport, *timeout) }},
			} {
				if !o.on {
					continue
				}
				r, err := meter.around(o.run)
				if err != nil {
					fail(err)
				}
				*o.into = append(*o.into, r)
			}
		}
		for b, rs := range res {
			var walls, cpus, sweeps []time.Duration
			var rss []int64
			for _, r := range rs {
				walls = append(walls, r.wall)
				cpus = append(cpus, r.cpu)
				sweeps = append(sweeps, r.sweep)
				rss = append(rss, r.maxrss)
			}
			if len(series) > 1 {
				fmt.Printf("%s:\n", series[b])
			}
			fmt.Printf("%6d targets: wall %s  peak RSS %s  (runs %d; each: %s)\n", n,
				median(walls), mib(medianOf(rss)), *runs, list(walls, rss))
			fmt.Printf("%6s          healthctl CPU (user+sys) %s, the sweep itself (duration_ms) %s (medians)\n", "",
				median(cpus), median(sweeps))
			if *withState {
				var sw, mw []time.Duration
				for _, r := range rs {
					sw, mw = append(sw, r.stateWrite), append(mw, r.promWrite)
				}
				fmt.Printf("%6s          --state written in %s (%.1f MB), --prom-file in %s (%.1f MB) (medians; atomic: temp file, fsync, rename)\n", "",
					median(sw), float64(rs[0].stateSize)/1e6, median(mw), float64(rs[0].promSize)/1e6)
			}
			if len(abs) > 0 {
				var aw, ac []time.Duration
				for _, r := range abs {
					aw, ac = append(aw, r.wall), append(ac, r.cpu)
				}
				fmt.Printf("%6s          ab -n %d -c 64, same server, same runs: wall %s, CPU %s; healthctl/ab: wall %.2fx, CPU %.2fx (medians)\n", "",
					n, median(aw), median(ac), float64(medianOf(walls))/float64(medianOf(aw)), float64(medianOf(cpus))/float64(medianOf(ac)))
				fmt.Printf("%6s          paired by run (each sweep over the ab run of its round; the host's drift cancels): wall %s\n", "", pairedRatios(walls, aw))
				if n == 10000 {
					verdict := "met"
					if r := pairedMedian(walls, aw); r > 1.5 || medianOf(rss) > 96<<10 {
						verdict = "NOT met"
					}
					fmt.Printf("%6s          the ab line of the budget (within 1.5x ab, 96 MiB; paired median, median peak RSS): %s in this run, on this host (the ratio moves with the kernel's price: see the CPU per target line)\n", "", verdict)
				}
			}
			printCurl(n, "curl --parallel --parallel-max 64", curls, walls, cpus,
				"curl keeps a connection to an address for its next URL; healthctl dials afresh for every probe")
			printCurl(n, "curl --parallel --parallel-max 64 -H 'Connection: close' (a connection per URL)", freshCurls, walls, cpus,
				"not the budget's anchor: curl doing what a probe does")
			printFloor("Go floor (dial, net/http request and response, close; 64 at a time)", floors, walls, cpus, abs)
			printFloor("bare floor (dial, fixed request bytes, read to EOF, close; 64 at a time)", bares, walls, cpus, abs)
			printFloor("epoll floor (the bare floor's exchange on one thread, one epoll set: ab's design in Go)", epolls, walls, cpus, abs)
			printMachine(rs, abs, floors, bares, epolls)
			printPerTarget(n, []client{{"healthctl", rs}, {"ab", abs}, {"curl", curls}, {"curl, fresh", freshCurls}, {"Go floor", floors}, {"bare floor", bares}, {"epoll", epolls}})
		}
		for b := 1; b < len(bins); b++ {
			for k := range *repeat {
				var w0, w1, c0, c1, u0, u1 []time.Duration
				var m0, m1 []time.Duration
				r0, r1 := res[k], res[b**repeat+k]
				for i := range r0 {
					w0, w1 = append(w0, r0[i].wall), append(w1, r1[i].wall)
					c0, c1 = append(c0, r0[i].cpu), append(c1, r1[i].cpu)
					u0, u1 = append(u0, r0[i].user), append(u1, r1[i].user)
					m0, m1 = append(m0, time.Duration(r0[i].maxrss)), append(m1, time.Duration(r1[i].maxrss))
				}
				fmt.Printf("%s / %s, paired by run: wall %s, CPU %s, user CPU %s, peak RSS %s\n", series[b**repeat+k], series[k], pairedRatios(w1, w0), pairedRatios(c1, c0), pairedRatios(u1, u0), pairedRatios(m1, m0))
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchwatch:", err)
	os.Exit(1)
}
