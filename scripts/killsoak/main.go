// Command killsoak checks that watch's state file loses nothing: it SIGKILLs
// -kills runs of `healthctl watch --once --state` at random moments of
// their life (every other one in its second half, where the state is
// written) and checks after each that the file parses and that its sweep
// count never went back; then it starts -overlap runs at once on the same
// file and checks that every one of them was recorded (sweeps grew by
// exactly -overlap) and the file parses. Targets are 20 loopback URLs (a
// third answering 503). scripts/kill.sh runs it.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/state"
)

func main() {
	bin := flag.String("bin", "healthctl", "the healthctl binary")
	kills := flag.Int("kills", 500, "SIGKILLs that must land while a run is alive")
	overlap := flag.Int("overlap", 20, "runs started at once on one state file")
	maxD := flag.Duration("max", 20*time.Minute, "give up after this long")
	flag.Parse()
	deadline := time.Now().Add(*maxD)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/down") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	dir, err := os.MkdirTemp("", "killsoak")
	check(err)
	defer os.RemoveAll(dir)
	targets := filepath.Join(dir, "targets.yaml")
	var b strings.Builder
	b.WriteString("targets:\n")
	for i := range 20 {
		path := "up"
		if i%3 == 0 {
			path = "down"
		}
		fmt.Fprintf(&b, "  - name: t%d\n    url: http://%s/%d/%s\n", i, l.Addr(), i, path)
	}
	check(os.WriteFile(targets, []byte(b.String()), 0o644))
	statePath := filepath.Join(dir, "state.json")
	run := func() *exec.Cmd {
		c := exec.Command(*bin, "watch", "--once", "--state", statePath, "--targets", targets,
			"--failure-threshold", "3", "--grace", "0s", "-o", "json", "--lock-timeout", "60s")
		c.Env = append(os.Environ(), "NO_PROXY=*", "HEALTHCTL_CONFIG=")
		return c
	}
	sweeps := func() int64 {
		f, err := state.Read(statePath)
		if err != nil {
			fail("the state does not parse: %v", err)
		}
		return f.Sweeps
	}

	var lives []time.Duration
	for range 3 {
		start := time.Now()
		out, err := run().CombinedOutput()
		if err != nil && !strings.Contains(err.Error(), "exit status 8") {
			fail("a full run failed: %v\n%s", err, out)
		}
		lives = append(lives, time.Since(start))
	}
	slices.Sort(lives)
	life := lives[1]
	fmt.Printf("one run takes %v\n", life.Round(time.Millisecond))

	tries, landed := 0, 0
	last := sweeps()
	for landed < *kills {
		if time.Now().After(deadline) {
			fail("only %d kills landed within -max (%d tries)", landed, tries)
		}
		tries++
		c := run()
		check(c.Start())
		from, to := time.Duration(0), life*21/20
		if tries%2 == 0 {
			from = life * 6 / 10
		}
		time.Sleep(from + rand.N(to-from))
		_ = c.Process.Signal(syscall.SIGKILL)
		err := c.Wait()
		if ee, ok := err.(*exec.ExitError); ok && ee.Sys().(syscall.WaitStatus).Signaled() {
			landed++
		}
		now := sweeps()
		if now < last {
			fail("after kill %d the sweep count went back from %d to %d", landed, last, now)
		}
		last = now
	}
	fmt.Printf("kills: %d runs, %d SIGKILLed while running; the state parsed after every one, its sweep count never went back (%d sweeps saved)\n", tries, landed, last)

	before := sweeps()
	var wg sync.WaitGroup
	errs := make(chan error, *overlap)
	for range *overlap {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := run().CombinedOutput()
			if err != nil && !strings.Contains(err.Error(), "exit status 8") {
				errs <- fmt.Errorf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		fail("an overlapping run failed: %v", err)
	}
	after := sweeps()
	if after-before != int64(*overlap) {
		fail("%d overlapping runs recorded %d sweeps", *overlap, after-before)
	}
	fmt.Printf("overlap: %d runs started at once on one state file; all %d sweeps recorded, the file parses\n", *overlap, after-before)
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "killsoak: "+format+"\n", args...)
	os.Exit(1)
}
