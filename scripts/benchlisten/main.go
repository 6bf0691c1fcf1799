//go:build linux

// Command benchlisten measures a long-running `healthctl watch` against
// `--once` over the same loopback fleet: it serves 200 on -addrs addresses
// of 127.0.0.0/8 (one listener each, the same port: loopback only), writes
// a targets file of -n block entries over them, then runs (1) `watch
// --once --state --prom-file` and reports its peak RSS (getrusage), (2) a
// long-running `watch --state` and (3) the same with `--listen`, each for
// -duration at -interval, sampling VmRSS from /proc every second and
// reporting the peak, the median of the last half, and VmHWM; with
// --listen it also times /status.json whole and one page of it. Every run
// is bounded (-duration plus 60 s) and stopped with SIGTERM.
// scripts/bench-watch-listen.sh runs it.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "healthctl", "the healthctl binary")
	n := flag.Int("n", 10000, "targets")
	addrs := flag.Int("addrs", 100, "loopback addresses the targets are spread over")
	interval := flag.Duration("interval", 10*time.Second, "the long-running watches' --interval")
	duration := flag.Duration("duration", 2*time.Minute, "how long each long-running watch runs")
	dir := flag.String("dir", "", "work directory (default: a temporary one)")
	runs := flag.String("runs", "once,long,listen", "which runs, in order: once (--once), long (long-running), listen (long-running --listen)")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "benchlisten")
		check(err)
		defer os.RemoveAll(d)
		*dir = d
	}
	port := serve(*addrs)
	targets := filepath.Join(*dir, "targets.yaml")
	writeTargets(targets, port, *n, *addrs)
	fmt.Printf("%d targets over %d addresses of 127/8 (port %s); load %s\n", *n, *addrs, port, load())

	for _, run := range strings.Split(*runs, ",") {
		switch run {
		case "once":
			once(*bin, *dir, targets)
		case "long", "listen":
			long(*bin, *dir, targets, *interval, *duration, run == "listen")
		default:
			check(fmt.Errorf("-runs: %q: want once, long or listen", run))
		}
	}
}

// once runs `watch --once` and reports its peak RSS.
func once(bin, dir, targets string) {
	state := filepath.Join(dir, "once.json")
	cmd := exec.Command(bin, "watch", "--once", "--targets", targets, "--state", state, "--prom-file", filepath.Join(dir, "once.prom"), "-o", "json")
	cmd.Stdout = io.Discard
	start := time.Now()
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() == 2) {
		check(err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	fmt.Printf("--once:                  %6.1f s, peak RSS %6.1f MiB\n", time.Since(start).Seconds(), float64(ru.Maxrss)/1024)
}

// long runs a long-running watch for d and reports its memory.
func long(bin, dir, targets string, interval, d time.Duration, listen bool) {
	args := []string{"watch", "--targets", targets, "--interval", interval.String(), "--state", filepath.Join(dir, "long.json"), "-o", "json"}
	name := "long-running"
	var addr string
	if listen {
		addr = freePort()
		args = append(args, "--listen", addr)
		name = "long-running --listen"
	}
	os.Remove(filepath.Join(dir, "long.json"))
	ctx, cancel := context.WithTimeout(context.Background(), d+60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	sweeps := make(chan int, 1)
	go func() {
		c := 0
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"sweep":`) {
				c++
			}
		}
		sweeps <- c
	}()
	var samples []float64
	end := time.Now().Add(d)
	var whole, page string
	for time.Now().Before(end) {
		time.Sleep(time.Second)
		if kb, ok := status(cmd.Process.Pid, "VmRSS:"); ok {
			samples = append(samples, kb/1024)
		}
		if listen && whole == "" && time.Until(end) < d/2 {
			whole = timeGet("http://" + addr + "/status.json")
			page = timeGet("http://" + addr + "/status.json?limit=1000")
		}
	}
	hwm, _ := status(cmd.Process.Pid, "VmHWM:")
	cpu := cpuSeconds(cmd.Process.Pid)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	n := <-sweeps
	last := slices.Clone(samples[len(samples)/2:])
	slices.Sort(last)
	fmt.Printf("%-24s %d sweeps in %s: peak RSS %6.1f MiB (VmHWM %6.1f), median of the last half %6.1f MiB; CPU %.1f s\n",
		name+":", n, d, slices.Max(samples), hwm/1024, last[len(last)/2], cpu)
	if listen {
		fmt.Printf("  /status.json whole: %s; ?limit=1000: %s\n", whole, page)
	}
}

// timeGet fetches url and says its size and time.
func timeGet(url string) string {
	start := time.Now()
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.Copy(io.Discard, resp.Body)
	return fmt.Sprintf("%d, %.1f MB in %.0f ms", resp.StatusCode, float64(b)/1e6, float64(time.Since(start).Microseconds())/1000)
}

// cpuSeconds is the process's user and system time so far (/proc/PID/stat,
// at the kernel's 100 ticks a second).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100
}

// status reads a kB figure of /proc/PID/status.
func status(pid int, key string) (float64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// serve answers 200 on the same port of addrs loopback addresses.
func serve(addrs int) string {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	ln, err := net.Listen("tcp", addr(0)+":0")
	check(err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	go http.Serve(ln, h)
	for a := 1; a < addrs; a++ {
		l, err := net.Listen("tcp", net.JoinHostPort(addr(a), port))
		check(err)
		go http.Serve(l, h)
	}
	return port
}

func addr(a int) string { return fmt.Sprintf("127.0.%d.%d", 1+a/254, 1+a%254) }

func writeTargets(file, port string, n, addrs int) {
	f, err := os.Create(file)
	check(err)
	w := bufio.NewWriter(f)
	w.WriteString("targets:\n")
	for i := range n {
		fmt.Fprintf(w, "  - name: env-%d\n    url: http://%s/env/%d/health\n", i, net.JoinHostPort(addr(i%addrs), port), i)
	}
	check(w.Flush())
	check(f.Close())
}

func freePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer ln.Close()
	return ln.Addr().String()
}

func load() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchlisten:", err)
		os.Exit(1)
	}
}
