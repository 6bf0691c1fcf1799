//go:build linux

// Linux only: peak RSS is getrusage's ru_maxrss, in KiB on Linux (bytes on
// macOS, absent on Windows); the benchmarks are measured on Linux.

// Command benchwatch measures one `healthctl watch --once` sweep over many
// loopback targets: it serves 200 on one loopback port (every target has its
// own name and path), writes a targets file, runs the sweep, and reports the
// wall time and the peak RSS of the healthctl process. It stops by itself:
// each run is bounded by -timeout. scripts/bench-watch.sh runs it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "healthctl", "the healthctl binary (a comma list: runs alternate between them)")
	counts := flag.String("n", "1000,10000", "comma list of target counts, one sweep each")
	runs := flag.Int("runs", 3, "sweeps per count (the median is reported)")
	timeout := flag.Duration("timeout", 60*time.Second, "limit of one sweep")
	extra := flag.String("args", "", "extra watch arguments (space separated)")
	flag.Parse()

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
	base := "http://" + l.Addr().String()

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
		writeTargets(file, base, n)
		// With several binaries (-bin a,b), runs alternate between them so
		// the machine's drift hits all alike.
		bins := strings.Split(*bin, ",")
		res := make([][]result, len(bins))
		for range *runs {
			for b, path := range bins {
				r, err := sweep(path, file, *timeout, strings.Fields(*extra))
				if err != nil {
					fail(err)
				}
				if r.pass != n {
					fail(fmt.Errorf("%s, %d targets: %d passed", path, n, r.pass))
				}
				res[b] = append(res[b], r)
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
			if len(bins) > 1 {
				fmt.Printf("%s:\n", bins[b])
			}
			fmt.Printf("%6d targets: wall %s  peak RSS %s  (runs %d; each: %s)\n", n,
				median(walls), mib(medianInt(rss)), *runs, list(walls, rss))
			fmt.Printf("%6s          healthctl CPU (user+sys) %s, the sweep itself (duration_ms) %s (medians)\n", "",
				median(cpus), median(sweeps))
		}
	}
}

func writeTargets(file, base string, n int) {
	f, err := os.Create(file)
	if err != nil {
		fail(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("targets:\n")
	for i := range n {
		fmt.Fprintf(w, "  - name: env-%d\n    url: %s/env/%d/health\n", i, base, i)
	}
	if err := w.Flush(); err != nil {
		fail(err)
	}
	f.Close()
}

// result is one sweep as measured from outside (wall, CPU, peak RSS in KiB)
// and as the sweep line reports it (its own duration, the targets passed).
type result struct {
	wall, cpu, sweep time.Duration
	maxrss           int64
	pass             int
}

// sweep runs one --once sweep and measures it.
func sweep(bin, file string, timeout time.Duration, extra []string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"watch", "--once", "-o", "json", "--targets", file}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
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
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("%s: %v", strings.Join(args, " "), err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	out, err := os.ReadFile(f.Name())
	if err != nil {
		return result{}, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var last struct {
		Sweep struct {
			Pass       int     `json:"pass"`
			DurationMS float64 `json:"duration_ms"`
		} `json:"sweep"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		return result{}, fmt.Errorf("no sweep line: %v", err)
	}
	return result{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		sweep: time.Duration(last.Sweep.DurationMS * float64(time.Millisecond)), maxrss: ru.Maxrss,
		pass: last.Sweep.Pass}, nil
}

func median(d []time.Duration) string {
	s := append([]time.Duration(nil), d...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2].Round(time.Millisecond).String()
}

func medianInt(v []int64) int64 {
	s := append([]int64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
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
