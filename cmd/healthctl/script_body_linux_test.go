package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() { extraCmds["peakrss"] = cmdPeakRSS }

// cmdPeakRSS implements peakrss MAXMIB WANT PROG [ARGS...] (see
// script_body_test.go). The peak is the child's VmHWM, read from
// /proc/PID/status while it runs: wait4's ru_maxrss cannot be used alone,
// because Go starts a child with vfork (CLONE_VM) and the kernel folds the
// mm the child shared until exec — the test binary's, 300 MiB in a -race
// suite — into the child's maxrss (/bin/true "peaked" at 302 MiB under a
// 300 MiB parent here). ru_maxrss stays an upper bound: the smaller of the
// two is the child's own.
func cmdPeakRSS(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "peakrss")
	const usage = "usage: peakrss MAXMIB WANT PROG [ARGS...]"
	if len(args) < 3 {
		ts.Fatalf(usage)
	}
	maxMiB, err1 := strconv.Atoi(args[0])
	want, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil {
		ts.Fatalf(usage)
	}
	prog, err := lookPath(ts, args[2])
	ts.Check(err)
	cmd := exec.Command(prog, args[3:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ts.Check(cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var hwmKiB int64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-tick.C:
			hwmKiB = max(hwmKiB, vmHWM(cmd.Process.Pid))
		case <-deadline:
			cmd.Process.Kill()
			<-exited
			ts.Fatalf("peakrss: %s still running after 60s", args[2])
		}
	}
	ts.Stdout().Write(stdout.Bytes())
	ts.Stderr().Write(stderr.Bytes())
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		ts.Fatalf("peakrss: no rusage for %s", args[2])
	}
	peakKiB := ru.Maxrss
	if hwmKiB > 0 && hwmKiB < peakKiB {
		peakKiB = hwmKiB
	}
	ts.Logf("peakrss: %s peaked at %.1f MiB resident (limit %d MiB; VmHWM %.1f, ru_maxrss %.1f)", args[2], float64(peakKiB)/1024, maxMiB, float64(hwmKiB)/1024, float64(ru.Maxrss)/1024)
	if got := cmd.ProcessState.ExitCode(); got != want {
		ts.Fatalf("peakrss: %s exited with %d, want %d", args[2], got, want)
	}
	if peakKiB > int64(maxMiB)<<10 {
		ts.Fatalf("peakrss: %s peaked at %.1f MiB resident, over the %d MiB limit", args[2], float64(peakKiB)/1024, maxMiB)
	}
}

// vmHWM is the peak resident set of process pid in KiB from
// /proc/PID/status, or 0 when it cannot be read (the process has gone).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kib
		}
	}
	return 0
}
