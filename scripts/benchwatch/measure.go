//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

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
