package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
)

// TestWaitRetryAfterNginx: `wait-healthy --respect-retry-after` against a
// real nginx that answers 503 with Retry-After: 2 until a file appears,
// judged by nginx's own access log (when each request arrived, $msec, and
// what it got), not by what healthctl says it did. With the flag the next
// probe comes no sooner than the 2 s asked for; without it, one per
// --interval (300 ms) — so the log tells the two apart, and healthctl's
// reported attempts must be the log's count.
func TestWaitRetryAfterNginx(t *testing.T) {
	besideScripts(t)
	if testing.Short() {
		t.Skip("-short: runs nginx for a few seconds")
	}
	if !stackfix.Installed(t, "nginx", ".ci/deps/curl-trust.sh") {
		t.SkipNow()
	}
	hc, err := exec.LookPath("healthctl")
	if err != nil {
		t.Fatalf("healthctl (this test binary, installed by testscript.Main) not on PATH: %v", err)
	}
	dir := t.TempDir()
	port, err := fixture.UnusedPort()
	if err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(dir, "ready")
	logFile := filepath.Join(dir, "access.log")
	conf := filepath.Join(dir, "nginx.conf")
	text := stackfix.NginxPrelude(dir) + fmt.Sprintf(`  log_format t '$msec $status';
  server {
    listen 127.0.0.1:%d;
    location = /health {
      access_log %s t;
      if (-f %s) { return 200 "ok\n"; }
      add_header Retry-After 2 always;
      return 503;
    }
  }
}
`, port, logFile, ready)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if !stackfix.StartDaemon(t, stackfix.Daemon{Name: "nginx", Dir: dir, Ports: []int{port}, Prog: "nginx", Args: []string{"-c", conf, "-p", dir}}) {
		t.FailNow()
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/health", port)

	type hit struct {
		at     float64
		status int
	}
	// run waits with args while the service warms for warm, and returns
	// nginx's log of it and healthctl's attempts.
	run := func(warm time.Duration, args ...string) ([]hit, int) {
		t.Helper()
		os.Remove(ready)
		os.WriteFile(logFile, nil, 0o644) // nginx appends (O_APPEND): truncating is safe
		time.AfterFunc(warm, func() { os.WriteFile(ready, nil, 0o644) })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, hc, append([]string{"wait-healthy", "-o", "json", "--timeout", "20s"}, append(args, url)...)...).Output()
		if err != nil {
			t.Fatalf("wait-healthy %v: %v\n%s", args, err, out)
		}
		var res struct {
			Attempts int `json:"attempts"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("wait-healthy -o json printed %s: %v", out, err)
		}
		b, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		var hits []hit
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			at, err1 := strconv.ParseFloat(f[0], 64)
			st, err2 := strconv.Atoi(f[1])
			if err1 != nil || err2 != nil {
				t.Fatalf("access log line %q", line)
			}
			hits = append(hits, hit{at, st})
		}
		if len(hits) == 0 || hits[len(hits)-1].status != 200 {
			t.Fatalf("nginx's log of wait-healthy %v: %v, want 503s then a 200", args, hits)
		}
		if res.Attempts != len(hits) {
			t.Errorf("wait-healthy %v says %d attempts, nginx logged %d: %v", args, res.Attempts, len(hits), hits)
		}
		return hits, res.Attempts
	}

	// Warm for 1 s: the first probe's 503 asks for 2 s, so the second
	// probe (no sooner than 2 s after the first) finds it ready.
	hits, _ := run(time.Second, "--respect-retry-after", "--interval", "300ms")
	if len(hits) != 2 || hits[0].status != 503 {
		t.Fatalf("with --respect-retry-after nginx logged %v, want one 503 then the 200", hits)
	}
	// A lower bound (it must have waited at least what was asked; the
	// log's clock has millisecond steps) and a generous upper one.
	if gap := hits[1].at - hits[0].at; gap < 1.99 || gap > 10 {
		t.Errorf("with --respect-retry-after the second request came %.3fs after the first, want >= 2s (Retry-After: 2)", gap)
	}

	// The same service without the flag: one probe per --interval.
	hits, _ = run(time.Second, "--interval", "300ms")
	if len(hits) < 3 {
		t.Fatalf("without --respect-retry-after nginx logged %v, want a probe every 300ms while it warmed", hits)
	}
	if gap := hits[1].at - hits[0].at; gap >= 1.99 {
		t.Errorf("without --respect-retry-after the second request came %.3fs after the first: Retry-After was obeyed unasked", gap)
	}
}
