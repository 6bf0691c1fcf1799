package main

import (
	"bytes"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() { extraCmds["peakrss"] = cmdPeakRSS }

// cmdPeakRSS implements peakrss MAXMIB WANT PROG [ARGS...] (see
// script_body_test.go): Linux's ru_maxrss is in KiB.
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
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-exited
		ts.Fatalf("peakrss: %s still running after 60s", args[2])
	}
	ts.Stdout().Write(stdout.Bytes())
	ts.Stderr().Write(stderr.Bytes())
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		ts.Fatalf("peakrss: no rusage for %s", args[2])
	}
	peakKiB := ru.Maxrss
	ts.Logf("peakrss: %s peaked at %.1f MiB resident (limit %d MiB)", args[2], float64(peakKiB)/1024, maxMiB)
	if got := cmd.ProcessState.ExitCode(); got != want {
		ts.Fatalf("peakrss: %s exited with %d, want %d", args[2], got, want)
	}
	if peakKiB > int64(maxMiB)<<10 {
		ts.Fatalf("peakrss: %s peaked at %.1f MiB resident, over the %d MiB limit", args[2], float64(peakKiB)/1024, maxMiB)
	}
}
