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
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/fixture"
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

// ratios is a[i]/b[i] over the runs where b[i] was measured, sorted.
func ratios(a, b []time.Duration) []float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			r = append(r, float64(a[i])/float64(b[i]))
		}
	}
	slices.Sort(r)
	return r
}

// pairedMedian is the median of a[i]/b[i] over the runs (0 without any).
func pairedMedian(a, b []time.Duration) float64 {
	if r := ratios(a, b); len(r) > 0 {
		return r[len(r)/2]
	}
	return 0
}

// pairedRatios is a[i]/b[i] over the runs: the median and the range.
func pairedRatios(a, b []time.Duration) string {
	r := ratios(a, b)
	if len(r) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx (%.2f-%.2fx over %d runs)", r[len(r)/2], r[0], r[len(r)-1], len(r))
}

// printFloor prints one floor's medians beside healthctl's (walls, cpus)
// and ab's, if it was run.
func printFloor(what string, floors []result, walls, cpus []time.Duration, abs []result) {
	if len(floors) == 0 {
		return
	}
	var fw, fc []time.Duration
	for _, r := range floors {
		fw, fc = append(fw, r.wall), append(fc, r.cpu)
	}
	fmt.Printf("%6s          %s, same runs: wall %s, CPU %s; healthctl/floor: wall %.2fx, CPU %.2fx",
		"", what, median(fw), median(fc), float64(medianOf(walls))/float64(medianOf(fw)), float64(medianOf(cpus))/float64(medianOf(fc)))
	if len(abs) > 0 {
		var aw []time.Duration
		for _, r := range abs {
			aw = append(aw, r.wall)
		}
		fmt.Printf("; floor/ab: wall %.2fx", float64(medianOf(fw))/float64(medianOf(aw)))
	}
	fmt.Println(" (medians)")
}

// runFloor runs this program as a floor client (mode -floor-client or
// -bare-client) over n targets and measures it as a sweep is measured.
func runFloor(mode string, n int, hostport string, timeout time.Duration) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	cmd := exec.CommandContext(ctx, self, mode, fmt.Sprintf("%d,%s", n, hostport))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("%s: %v", mode, err)
	}
	return result{wall: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), user: cmd.ProcessState.UserTime()}, nil
}

// floorRun is the Go floor: n GETs of /env/I/health, each on a fresh
// connection (Connection: close), 64 at a time, the request written by
// net/http and the answer parsed by it, every wait bounded by a deadline.
// As mode -bare-client, the bare floor: the request written as fixed bytes
// and the answer read to EOF (fixture.BareGet).
func floorRun(mode, spec string) {
	bare := mode == "-bare-client"
	n, ap := floorSpec(mode, spec)
	hostport := ap.String()
	jobs := make(chan int)
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4096)
			for i := range jobs {
				var err error
				if bare {
					err = fixture.BareGet(hostport, "/env/"+strconv.Itoa(i)+"/health", buf)
				} else {
					err = fixture.FloorGet(hostport, fmt.Sprintf("http://%s/env/%d/health", hostport, i))
				}
				if err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if f := failed.Load(); f > 0 {
		fail(fmt.Errorf("the floor: %d of %d requests got no 200", f, n))
	}
}

// runAB runs ab over n fresh connections (no -k), 64 at a time, and
// measures it as a sweep is measured.
func runAB(n int, url string, timeout time.Duration) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ab", "-q", "-n", fmt.Sprint(n), "-c", "64", url)
	out, err := os.CreateTemp("", "benchwatch-ab")
	if err != nil {
		return result{}, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("ab: %v", err)
	}
	wall := time.Since(start)
	text, _ := os.ReadFile(out.Name())
	if !strings.Contains(string(text), "Failed requests:        0") {
		return result{}, fmt.Errorf("ab: some requests failed:\n%s", text)
	}
	return result{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), user: cmd.ProcessState.UserTime()}, nil
}

// whole checks that the state file holds n targets and the textfile n
// probe_success samples and ends with a newline.
func whole(state, prom string, n int) error {
	data, err := os.ReadFile(state)
	if err != nil {
		return err
	}
	var st struct {
		Targets map[string]json.RawMessage `json:"targets"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("state file: %v", err)
	}
	if len(st.Targets) != n {
		return fmt.Errorf("state file: %d targets, want %d", len(st.Targets), n)
	}
	if data, err = os.ReadFile(prom); err != nil {
		return err
	}
	if got := strings.Count(string(data), "\nprobe_success{"); got != n || !strings.HasSuffix(string(data), "\n") {
		return fmt.Errorf("textfile: %d probe_success samples, want %d", got, n)
	}
	return nil
}

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// writeTargets writes n targets at host:port, or spread over addrs
// addresses of 127/8 (-1: each its own, 127.B.C.D with D 1..254, C 1..254,
// B from 1: 64,516 addresses per B), in the shape asked for, and returns
// their URLs. The users' shape takes four kinds of entry in turn: a block
// entry; a flow mapping with a quoted URL; a commented entry with quoted
// scalars, a trailing comment and a header in a flow list; a block entry
// with a header list (a Host of its own) and an expectation, all under a commented header and
// defaults: what people write (SPEC §10), which the plainest-block fast
// path does not read. The headers shape gives every entry a Host and an
// Authorization token of its own. urlShape path makes the URLs differ by
// their path, query by a query string (every fourth with a secret
// parameter).
func writeTargets(file, host, port string, n, addrs int, shape, urlShape string) []string {
	f, err := os.Create(file)
	if err != nil {
		fail(err)
	}
	w := bufio.NewWriter(f)
	if shape == "users" {
		w.WriteString("# generated by benchwatch: the shapes people write\ndefaults:\n  max_time: 5s\ntargets:\n")
	} else {
		w.WriteString("targets:\n")
	}
	urls := make([]string, 0, n)
	for i := range n {
		h := host
		switch {
		case addrs < 0 || addrs >= n:
			h = fmt.Sprintf("127.%d.%d.%d", 1+i/(254*254), 1+(i/254)%254, 1+i%254)
		case addrs > 0:
			// Address a of addrs, its second octet spread over 127/8.
			a := i % addrs
			h = fmt.Sprintf("127.%d.%d.%d", 1+(a*37)%254, 1+(a/254)%254, 1+a%254)
		}
		u := fmt.Sprintf("http://%s/env/%d/health", net.JoinHostPort(h, port), i)
		if urlShape == "query" {
			u = fmt.Sprintf("http://%s/health?full=1&env=%d", net.JoinHostPort(h, port), i)
			if i%4 == 1 {
				u += fmt.Sprintf("&token=s3cret-%d", i)
			}
		}
		urls = append(urls, u)
		switch shape {
		case "block":
			fmt.Fprintf(w, "  - name: env-%d\n    url: %s\n", i, u)
			continue
		case "headers":
			fmt.Fprintf(w, "  - name: env-%d\n    url: \"%s\"\n    headers:\n      - \"Host: env-%d.fleet.invalid\"\n      - \"Authorization: Bearer tok-%d\"\n", i, u, i, i)
			continue
		}
		switch i % 4 {
		case 0:
			fmt.Fprintf(w, "  - name: env-%d\n    url: %s\n", i, u)
		case 1:
			fmt.Fprintf(w, "  - {name: env-%d, url: %q}\n", i, u)
		case 2:
			fmt.Fprintf(w, "  # team %d\n  - name: \"env-%d\"\n    url: '%s'   # behind the LB\n    headers: [\"X-Probe: 1\"]\n", i%7, i, u)
		case 3:
			// A virtual host of its own, as a fleet behind one ingress
			// is written: a header no other entry has.
			fmt.Fprintf(w, "  - name: env-%d\n    url: \"%s\"\n    headers:\n      - \"X-Team: t%d\"\n      - \"Host: env-%d.fleet.invalid\"\n    expect_status: 2xx\n", i, u, i%7, i)
		}
	}
	if err := w.Flush(); err != nil {
		fail(err)
	}
	f.Close()
	return urls
}

// closedPort is a loopback port nothing listens on: one the kernel just
// gave a listener that is closed again (every address of 127/8 refuses it).
func closedPort() string {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

// spreadText says how the targets are spread over addresses.
func spreadText(addrs, n int, host string) string {
	switch {
	case addrs < 0 || addrs >= n:
		return "each target its own address of 127/8"
	case addrs > 0:
		return fmt.Sprintf("over %d addresses across 127/8", addrs)
	}
	return "every target at " + host
}

// writeCurlConfig writes a curl config (-K) fetching every URL to
// /dev/null.
func writeCurlConfig(file string, urls []string) {
	f, err := os.Create(file)
	if err != nil {
		fail(err)
	}
	w := bufio.NewWriter(f)
	for _, u := range urls {
		fmt.Fprintf(w, "url = \"%s\"\noutput = \"/dev/null\"\n", u)
	}
	if err := w.Flush(); err != nil {
		fail(err)
	}
	f.Close()
}

// runCurl runs curl over the URLs of cfg, 64 transfers at a time, as one
// process fetching many URLs does (curl's defaults: it keeps connections to
// an address for reuse; fresh: `Connection: close`, a connection a URL),
// checks that every answer was a 200, and counts the connections it opened.
func runCurl(n int, cfg string, timeout time.Duration, fresh bool) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"-s", "--no-progress-meter", "--parallel", "--parallel-max", "64", "--max-time", "10", "-w", "%{http_code} %{num_connects}\n", "-K", cfg}
	if fresh {
		args = append(args, "-H", "Connection: close")
	}
	cmd := exec.CommandContext(ctx, "curl", args...)
	out, err := os.CreateTemp("", "benchwatch-curl")
	if err != nil {
		return result{}, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("curl: %v", err)
	}
	wall := time.Since(start)
	text, _ := os.ReadFile(out.Name())
	got, conns := 0, 0
	for _, l := range strings.Split(string(text), "\n") {
		var code, c int
		if _, err := fmt.Sscanf(l, "%d %d", &code, &c); err == nil {
			if code == 200 {
				got++
			}
			conns += c
		}
	}
	if got != n {
		return result{}, fmt.Errorf("curl: %d of %d answers were 200", got, n)
	}
	return result{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), user: cmd.ProcessState.UserTime(), conns: conns}, nil
}

// printCurl prints a curl client's runs against the sweeps of the same
// rounds (walls, cpus): the medians, the paired ratios, the connections it
// opened, and at 10,000 targets whether the sweep was within 1.0x of it.
func printCurl(n int, what string, curls []result, walls, cpus []time.Duration, note string) {
	if len(curls) == 0 {
		return
	}
	var cw, cc []time.Duration
	var conns []int
	for _, r := range curls {
		cw, cc, conns = append(cw, r.wall), append(cc, r.cpu), append(conns, r.conns)
	}
	fmt.Printf("%6s          %s over the same %d URLs, same runs: wall %s, CPU %s, connections opened %v; healthctl/curl: wall %.2fx, CPU %.2fx (medians)\n", "",
		what, n, median(cw), median(cc), conns, float64(medianOf(walls))/float64(medianOf(cw)), float64(medianOf(cpus))/float64(medianOf(cc)))
	fmt.Printf("%6s          paired by run (each sweep over the curl run of its round): wall %s\n", "", pairedRatios(walls, cw))
	if n == 10000 {
		verdict := "met"
		if pairedMedian(walls, cw) > 1.0 {
			verdict = "NOT met"
		}
		fmt.Printf("%6s          within 1.0x of it (paired median): %s in this run (%s)\n", "", verdict, note)
	}
}

// result is one sweep as measured from outside (wall, CPU, peak RSS in KiB)
// and as the sweep line reports it (its own duration, the targets passed).
type result struct {
	wall, cpu, sweep time.Duration
	// user is cpu's user part (the rest is the kernel's: system calls,
	// the loopback's TCP).
	user time.Duration
	// server is the server's CPU time over the run (-server-pid; 0: not
	// measured).
	server                time.Duration
	stateWrite, promWrite time.Duration
	maxrss                int64
	pass, fail            int
	// conns is how many connections a curl run opened.
	conns               int
	stateSize, promSize int64
}

// sweep runs one --once sweep and measures it.
func sweep(bin, file string, timeout time.Duration, extra []string, down bool) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"watch", "--once", "-o", "json", "--targets", file}, extra...)
	// Through a small parent of its own (measure): Linux's ru_maxrss of a
	// process starts from the high-water mark of the memory it was forked
	// from, and Go forks with the parent's memory shared until exec, so a
	// run started from this process (grown by reading the last run's
	// 100,000 lines and 142 MB textfile) reported this process's peak:
	// 682 MiB for a sweep that peaks at 225.
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	mf, err := os.CreateTemp("", "benchwatch-measure")
	if err != nil {
		return result{}, err
	}
	mf.Close()
	defer os.Remove(mf.Name())
	cmd := exec.CommandContext(ctx, self, append([]string{"-measure", mf.Name(), bin}, args...)...)
	cmd.Env = append(os.Environ(), "NO_PROXY=*")
	cmd.Stderr = os.Stderr
	// Stdout goes to a file, as a cron job's would: a pipe read by this
	// process (busy with the fixture's 10,000 connections) would measure
	// how fast we drain it, not how fast healthctl writes.
	f, err := os.CreateTemp("", "benchwatch-out")
	if err != nil {
		return result{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cmd.Stdout = f
	if err := cmd.Run(); err != nil {
		// A fleet failing at once ends with the sweep's own code for it.
		var ee *exec.ExitError
		if !down || !errors.As(err, &ee) || (ee.ExitCode() != 8 && ee.ExitCode() != 9) {
			return result{}, fmt.Errorf("%s: %v", strings.Join(args, " "), err)
		}
	}
	var m measured
	if b, err := os.ReadFile(mf.Name()); err != nil || json.Unmarshal(b, &m) != nil {
		return result{}, fmt.Errorf("%s: no measurement (%v)", strings.Join(args, " "), err)
	}
	out, err := os.ReadFile(f.Name())
	if err != nil {
		return result{}, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var last struct {
		Sweep struct {
			Pass           int     `json:"pass"`
			Fail           int     `json:"fail"`
			DurationMS     float64 `json:"duration_ms"`
			StateWriteMS   float64 `json:"state_write_ms"`
			MetricsWriteMS float64 `json:"metrics_write_ms"`
		} `json:"sweep"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		return result{}, fmt.Errorf("no sweep line: %v", err)
	}
	return result{wall: m.Wall, cpu: m.CPU, user: m.User,
		sweep: time.Duration(last.Sweep.DurationMS * float64(time.Millisecond)), maxrss: m.MaxRSS,
		stateWrite: time.Duration(last.Sweep.StateWriteMS * float64(time.Millisecond)),
		promWrite:  time.Duration(last.Sweep.MetricsWriteMS * float64(time.Millisecond)),
		pass:       last.Sweep.Pass, fail: last.Sweep.Fail}, nil
}

func median(d []time.Duration) string { return medianOf(d).Round(time.Millisecond).String() }

// medianOf is the middle value of v (the upper one of an even count).
func medianOf[T cmp.Ordered](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

func list(w []time.Duration, r []int64) string {
	var parts []string
	for i := range w {
		parts = append(parts, fmt.Sprintf("%s/%s", w[i].Round(time.Millisecond), mib(r[i])))
	}
	return strings.Join(parts, " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchwatch:", err)
	os.Exit(1)
}

// measured is one run as its measuring parent saw it.
type measured struct {
	Wall   time.Duration `json:"wall"`
	CPU    time.Duration `json:"cpu"`
	User   time.Duration `json:"user"`
	MaxRSS int64         `json:"maxrss_kib"`
}

// measure runs argv (stdin, stdout and stderr its own), writes its wall
// time, CPU time (user+sys) and peak RSS to out, and exits as it did. This
// process is small, so the peak it hands down at exec is a few MiB, not
// the benchmark driver's.
func measure(out string, argv []string) {
	if len(argv) == 0 {
		fail(fmt.Errorf("-measure %s: no command", out))
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The driver's -timeout kills this process: the run goes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fail(err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	b, _ := json.Marshal(measured{Wall: wall, CPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), User: cmd.ProcessState.UserTime(), MaxRSS: ru.Maxrss})
	if werr := os.WriteFile(out, b, 0o644); werr != nil {
		fail(werr)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}

// printMachine prints, when the server's CPU was measured (-server-pid),
// what each run cost the whole machine (the client's CPU and the server's)
// and how many cores that kept busy. On a machine the client and the
// server share, a run that keeps every core busy takes (client CPU +
// server CPU) / cores: healthctl's wall time within 1.5x ab's then leaves
// it 1.5 x (ab's CPU + the server's for ab) - the server's for healthctl
// of CPU time, the client allowance printed here (median of the rounds).
func printMachine(hc, abs, floors, bares, epolls []result) {
	if len(hc) == 0 || hc[0].server == 0 {
		return
	}
	line := func(what string, rs []result) {
		if len(rs) == 0 {
			return
		}
		var cpu, srv, busy []float64
		for _, r := range rs {
			cpu = append(cpu, r.cpu.Seconds()*1e3)
			srv = append(srv, r.server.Seconds()*1e3)
			busy = append(busy, (r.cpu+r.server).Seconds()/r.wall.Seconds())
		}
		fmt.Printf("%6s            %-10s client CPU %4.0f ms + server CPU %4.0f ms; %.2f cores busy (medians)\n", "", what,
			medianOf(cpu), medianOf(srv), medianOf(busy))
	}
	fmt.Printf("%6s          the machine (client and server share it; %d cores):\n", "", runtime.NumCPU())
	line("healthctl", hc)
	line("ab", abs)
	line("Go floor", floors)
	line("bare floor", bares)
	line("epoll", epolls)
	if len(abs) == 0 {
		return
	}
	var allow, ratio, used []float64
	for i := range min(len(hc), len(abs)) {
		allow = append(allow, (1.5*(abs[i].cpu+abs[i].server).Seconds()-hc[i].server.Seconds())*1e3)
		ratio = append(ratio, (hc[i].cpu+hc[i].server).Seconds()/(abs[i].cpu+abs[i].server).Seconds())
		used = append(used, hc[i].cpu.Seconds()*1e3)
	}
	fmt.Printf("%6s          machine CPU healthctl/ab, paired: %.2fx; 1.5x ab leaves the client %.0f ms of CPU (healthctl used %.0f) (medians)\n", "",
		medianOf(ratio), medianOf(allow), medianOf(used))
}

// client is one client's runs, named for printing.
type client struct {
	name string
	rs   []result
}

// printPerTarget prints each client's CPU time per target, split into user
// and system time (medians). The system part is mostly the kernel's work
// for a loopback connection, the same for every client and dear or cheap
// as the host is that hour (it doubled between two days here); the user
// part is the client's own code, and steadier across hosts: ab's wall
// time, which is nearly all system time, moves the ratio to it with the
// host while healthctl's own work stays where it is. The split is the
// kernel's estimate (its CPU time shared out by the ticks that found the
// process in user or system mode): steady over a 10,000-target run's
// second of CPU, coarse over 1,000 targets' tenth, where the start-up's
// milliseconds also weigh.
func printPerTarget(n int, clients []client) {
	fmt.Printf("%6s          CPU per target, user + system (medians):", "")
	sep := " "
	for _, c := range clients {
		if len(c.rs) == 0 {
			continue
		}
		var user, sys []float64
		for _, r := range c.rs {
			user = append(user, r.user.Seconds()*1e6/float64(n))
			sys = append(sys, (r.cpu-r.user).Seconds()*1e6/float64(n))
		}
		fmt.Printf("%s%s %.1f + %.1f µs", sep, c.name, medianOf(user), medianOf(sys))
		sep = "; "
	}
	fmt.Println()
}
