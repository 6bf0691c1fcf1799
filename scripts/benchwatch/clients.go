//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/healthctl/healthctl/internal/fixture"
)

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
