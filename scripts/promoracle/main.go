//go:build unix

// Command promoracle is the real-Prometheus oracle of watch --listen's
// /probe: -n loopback targets that answer 200 after -delay, a `healthctl
// watch --listen` serving /probe, and a real `prometheus` scraping every
// target through /probe with blackbox_exporter's README relabelling at
// -interval for -duration. It then asks Prometheus how many scrapes it
// made, how many had up == 0 (the scrape itself failed: no answer within
// its timeout) and how many probe_success == 0, and exits 1 unless every
// scrape was up and every probe passed.
//
// With -blackbox, the same Prometheus in the same run also scrapes the
// same targets with the same module name (http_2xx: blackbox's own,
// `prober: http`) through blackbox_exporter itself (job
// blackbox_exporter, the same relabelling), and the four counts are
// reported for it too. Its losses are reported, never a failure: it is
// the comparison, not the subject, and on a shared 2-core runner
// carrying both exporters, Prometheus and the targets, a scrape it
// answers late is the machine's as much as its own.
//
// Loopback only (the targets, the listener, blackbox_exporter,
// Prometheus's own web port); every process it starts is stopped when it
// ends, and it ends within -duration plus 2 minutes.
// scripts/prom-listen-oracle.sh runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "healthctl", "the healthctl binary")
	prom := flag.String("prometheus", "prometheus", "the prometheus binary")
	n := flag.Int("n", 1000, "targets")
	delay := flag.Duration("delay", 100*time.Millisecond, "how long each target takes to answer")
	interval := flag.Duration("interval", 5*time.Second, "the scrape interval (and timeout)")
	duration := flag.Duration("duration", 60*time.Second, "how long Prometheus scrapes")
	dir := flag.String("dir", "", "work directory (default: a temporary one)")
	extra := flag.String("args", "", "extra watch arguments (space separated)")
	blackbox := flag.String("blackbox", "", "blackbox_exporter's binary: scraped beside the listener by the same Prometheus, the same targets and module (reported, not judged)")
	rules := flag.String("rules", "", "an alert rules file (the shipped docs/healthctl-alerts.yml): after the scrape check the watcher is killed, and HealthctlWatcherDown must fire")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "promoracle")
		check(err)
		defer os.RemoveAll(d)
		*dir = d
	}
	bound := *duration + 2*time.Minute
	if *rules != "" {
		bound += 4 * time.Minute // the alert's for: 2m, and its evaluations
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()

	// The targets: one loopback server, a path each, answering after delay.
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	go http.Serve(tl, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(*delay):
		case <-r.Context().Done():
		}
		io.WriteString(w, "ok\n")
	}))
	target := "http://" + tl.Addr().String()

	listen := freePort()
	args := []string{"watch", "--interval", "1h", "--listen", listen, "--probe-allow", "127.0.0.1", target + "/self"}
	if *extra != "" {
		args = append(args, strings.Fields(*extra)...)
	}
	w := start(ctx, *dir, "healthctl", *bin, args...)
	defer stop(w)
	waitHTTP(ctx, "http://"+listen+"/healthz")

	var bbx string
	if *blackbox != "" {
		// blackbox_exporter's own http_2xx, as its example file has it.
		bcfg := filepath.Join(*dir, "blackbox.yml")
		check(os.WriteFile(bcfg, []byte("modules:\n  http_2xx:\n    prober: http\n"), 0o644))
		bbx = freePort()
		x := start(ctx, *dir, "blackbox_exporter", *blackbox, "--config.file="+bcfg, "--web.listen-address="+bbx, "--log.level=warn")
		defer stop(x)
		waitHTTP(ctx, "http://"+bbx+"/-/healthy")
	}

	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\nscrape_configs:\n", *interval, *interval, *interval)
	// blackbox_exporter's README relabelling: one job through the
	// listener (job blackbox, as the docs name it), and the same
	// through blackbox_exporter itself.
	job := func(name, exporter string) {
		fmt.Fprintf(&b, "  - job_name: %s\n    metrics_path: /probe\n    params:\n      module: [http_2xx]\n    static_configs:\n      - targets:\n", name)
		for i := range *n {
			fmt.Fprintf(&b, "          - %s/t/%d\n", target, i)
		}
		fmt.Fprintf(&b, "    relabel_configs:\n      - source_labels: [__address__]\n        target_label: __param_target\n      - source_labels: [__param_target]\n        target_label: instance\n      - target_label: __address__\n        replacement: %s\n", exporter)
	}
	job("blackbox", listen)
	if bbx != "" {
		job("blackbox_exporter", bbx)
	}
	if *rules != "" {
		// The watcher's own /metrics as the docs scrape it (job
		// healthctl), and the shipped rules as they are.
		abs, err := filepath.Abs(*rules)
		check(err)
		fmt.Fprintf(&b, "  - job_name: healthctl\n    static_configs: [{targets: [%q]}]\nrule_files: [%q]\n", listen, abs)
	}
	cfg := filepath.Join(*dir, "prometheus.yml")
	check(os.WriteFile(cfg, []byte(b.String()), 0o644))
	web := freePort()
	p := start(ctx, *dir, "prometheus", *prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(*dir, "tsdb"),
		"--web.listen-address="+web, "--log.level=warn")
	defer stop(p)
	waitHTTP(ctx, "http://"+web+"/-/ready")
	through := "healthctl's /probe"
	if bbx != "" {
		through += " and blackbox_exporter's"
	}
	fmt.Printf("%d targets answering in %s, scraped every %s through %s for %s; load %s\n", *n, *delay, *interval, through, *duration, load())
	select {
	case <-time.After(*duration):
	case <-ctx.Done():
		check(ctx.Err())
	}
	// Every query at one instant, over the same window: each count is
	// a difference within one query.
	at := strconv.FormatInt(time.Now().Unix(), 10)
	win := strconv.Itoa(int(duration.Seconds())) + "s"
	counts := func(job string) (scrapes, down, probes, failed float64) {
		over := func(f, m string) string { return f + `(` + m + `{job="` + job + `"}[` + win + `])` }
		scrapes = query(ctx, web, at, `sum(`+over("count_over_time", "up")+`)`)
		down = query(ctx, web, at, `sum(`+over("count_over_time", "up")+` - `+over("sum_over_time", "up")+`)`)
		probes = query(ctx, web, at, `sum(`+over("count_over_time", "probe_success")+`)`)
		failed = query(ctx, web, at, `sum(`+over("count_over_time", "probe_success")+` - `+over("sum_over_time", "probe_success")+`)`)
		return
	}
	scrapes, down, probes, failed := counts("blackbox")
	fmt.Printf("healthctl:         scrapes %.0f, up == 0: %.0f; probe_success samples %.0f, == 0: %.0f; load %s\n", scrapes, down, probes, failed, load())
	if bbx != "" {
		bs, bd, bp, bf := counts("blackbox_exporter")
		fmt.Printf("blackbox_exporter: scrapes %.0f, up == 0: %.0f; probe_success samples %.0f, == 0: %.0f (reported, not judged)\n", bs, bd, bp, bf)
	}
	if scrapes < float64(*n) || down > 0 || failed > 0 {
		fmt.Printf("FAIL: healthctl's /probe lost %.0f scrapes (up == 0) and failed %.0f probes of %.0f scrapes: want every scrape up and every probe passed\n", down, failed, scrapes)
		os.Exit(1)
	}
	if *rules != "" {
		deadWatcher(ctx, w, web)
	}
	fmt.Println("ok")
}

// deadWatcher kills the watcher (SIGKILL, as a crash or the OOM killer
// would) and waits until Prometheus, evaluating the shipped rules, fires
// HealthctlWatcherDown: a dead watcher raises the alert its docs promise.
func deadWatcher(ctx context.Context, w *exec.Cmd, web string) {
	syscall.Kill(-w.Process.Pid, syscall.SIGKILL)
	killed := time.Now()
	fmt.Printf("watcher killed (SIGKILL); waiting for HealthctlWatcherDown to fire\n")
	for ctx.Err() == nil {
		at := strconv.FormatInt(time.Now().Unix(), 10)
		if query(ctx, web, at, `count(ALERTS{alertname="HealthctlWatcherDown",alertstate="firing"})`) > 0 {
			fmt.Printf("HealthctlWatcherDown firing %s after the kill\n", time.Since(killed).Round(time.Second))
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
	fmt.Println("FAIL: HealthctlWatcherDown never fired after the watcher was killed")
	os.Exit(1)
}

// start runs a child with its output in dir/name.log, in a process group
// of its own (stop ends the group).
func start(ctx context.Context, dir, name, bin string, args ...string) *exec.Cmd {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	check(err)
	cmd := exec.CommandContext(ctx, bin, args...)
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
func waitHTTP(ctx context.Context, url string) {
	c := &http.Client{Timeout: 2 * time.Second}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(100 * time.Millisecond) {
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
	}
	check(fmt.Errorf("%s never answered 200", url))
}

// query is one instant query's single value, evaluated at the Unix time at.
func query(ctx context.Context, web, at, q string) float64 {
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+web+"/api/v1/query?time="+at+"&query="+url.QueryEscape(q), nil)
	resp, err := http.DefaultClient.Do(req)
	check(err)
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	check(json.NewDecoder(resp.Body).Decode(&r))
	if len(r.Data.Result) == 0 {
		return 0
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	f, err := strconv.ParseFloat(s, 64)
	check(err)
	return f
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
		fmt.Fprintln(os.Stderr, "promoracle:", err)
		os.Exit(1)
	}
}
