//go:build linux

// Command benchblackbox pairs `healthctl watch --listen`'s /probe with
// blackbox_exporter's: the same loopback targets (200 at once, from this
// process), the same module (http_2xx), the same load (-c clients, each
// with its keep-alive connection, sending -n /probe requests a round with
// a 5 s scrape timeout), the two exporters' rounds interleaved (ABBA…).
// Each round reports probes a second (answers with probe_success 1 over
// the round's wall time) and CPU a probe (the exporter's user+system time,
// /proc/PID/stat, over its answers); the summary is the median of each
// and the ratio. Any answer other than probe_success 1 is counted and
// fails the run. Loopback only; bounded (-rounds × 2 × 60 s at most).
// scripts/bench-listen-blackbox.sh runs it.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
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
)

func main() {
	bin := flag.String("bin", "healthctl", "the healthctl binary")
	bbx := flag.String("blackbox", "prometheus-blackbox-exporter", "blackbox_exporter's binary")
	n := flag.Int("n", 4000, "/probe requests a round")
	c := flag.Int("c", 32, "clients at once")
	targets := flag.Int("targets", 1000, "distinct target URLs (paths of one loopback server)")
	rounds := flag.Int("rounds", 6, "rounds of each exporter, interleaved")
	flag.Parse()
	dir, err := os.MkdirTemp("", "benchblackbox")
	check(err)
	defer os.RemoveAll(dir)

	tl, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	go http.Serve(tl, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }))
	target := "http://" + tl.Addr().String()

	hc := freePort()
	h := start(dir, "healthctl", *bin, "watch", "--interval", "1h", "--listen", hc, "--probe-allow", "127.0.0.1",
		"--probe-rate", "1000000", target+"/self")
	defer stop(h)
	cfg := filepath.Join(dir, "blackbox.yml")
	check(os.WriteFile(cfg, []byte("modules:\n  http_2xx:\n    prober: http\n"), 0o644))
	bb := freePort()
	b := start(dir, "blackbox_exporter", *bbx, "--config.file="+cfg, "--web.listen-address="+bb, "--log.level=warn")
	defer stop(b)
	waitHTTP("http://" + hc + "/healthz")
	waitHTTP("http://" + bb + "/-/healthy")

	type exporter struct {
		name, addr string
		pid        int
		rate, cpu  []float64
	}
	ex := []*exporter{{name: "healthctl", addr: hc, pid: h.Process.Pid}, {name: "blackbox_exporter", addr: bb, pid: b.Process.Pid}}
	fmt.Printf("%d /probe requests a round, %d clients (keep-alive), %d targets answering 200 at once, module http_2xx, scrape timeout 5 s; %d cores; load %s\n",
		*n, *c, *targets, runtime.NumCPU(), load())
	// A warm-up round each, not counted.
	for _, e := range ex {
		round(e.addr, target, *n/4, *c, *targets)
	}
	for r := range *rounds {
		order := ex
		if r%2 == 1 {
			order = []*exporter{ex[1], ex[0]}
		}
		for _, e := range order {
			cpu0 := cpuSeconds(e.pid)
			t0 := time.Now()
			ok, bad := round(e.addr, target, *n, *c, *targets)
			wall := time.Since(t0).Seconds()
			cpu := cpuSeconds(e.pid) - cpu0
			if bad > 0 {
				fmt.Printf("FAIL: %s: %d of %d answers without probe_success 1\n", e.name, bad, *n)
				os.Exit(1)
			}
			e.rate = append(e.rate, float64(ok)/wall)
			e.cpu = append(e.cpu, cpu/float64(ok)*1e3)
			fmt.Printf("round %d %-18s %7.0f probes/s, %.3f ms CPU a probe\n", r+1, e.name, float64(ok)/wall, cpu/float64(ok)*1e3)
		}
	}
	med := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	for _, e := range ex {
		fmt.Printf("%-18s median %7.0f probes/s (%.0f–%.0f), %.3f ms CPU a probe (%.3f–%.3f)\n", e.name,
			med(e.rate), slices.Min(e.rate), slices.Max(e.rate), med(e.cpu), slices.Min(e.cpu), slices.Max(e.cpu))
	}
	fmt.Printf("healthctl / blackbox_exporter: %.2f× the probes a second, %.2f× the CPU a probe; load %s\n",
		med(ex[0].rate)/med(ex[1].rate), med(ex[0].cpu)/med(ex[1].cpu), load())
}

// round sends n /probe requests from c clients, each request a target of
// its own (round-robin over targets paths), and counts the answers with
// probe_success 1 and the others.
func round(exporter, target string, n, c, targets int) (ok, bad int) {
	var next, good, fail atomic.Int64
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for range c {
		wg.Go(func() {
			cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 10 * time.Second}
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || ctx.Err() != nil {
					return
				}
				u := "http://" + exporter + "/probe?module=http_2xx&target=" + url.QueryEscape(target+"/t/"+strconv.Itoa(int(i)%targets))
				req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
				req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "5")
				resp, err := cl.Do(req)
				if err != nil {
					fail.Add(1)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && bytes.Contains(body, []byte("\nprobe_success 1\n")) {
					good.Add(1)
				} else {
					fail.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(good.Load()), int(fail.Load()) + n - int(good.Load()+fail.Load())
}

// cpuSeconds is a process's user and system time so far (/proc/PID/stat,
// at the kernel's 100 ticks a second).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	check(err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100
}

// start runs a child with its output in dir/name.log, in a process group
// of its own (stop ends the group).
func start(dir, name, bin string, args ...string) *exec.Cmd {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	check(err)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	check(cmd.Start())
	return cmd
}

func stop(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// waitHTTP waits (30 s at most) until url answers 200.
func waitHTTP(url string) {
	c := &http.Client{Timeout: 2 * time.Second}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
	}
	check(fmt.Errorf("%s never answered 200", url))
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
		fmt.Fprintln(os.Stderr, "benchblackbox:", err)
		os.Exit(1)
	}
}
