//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

// stdoutto closed|full N PROG [ARGS...]
//
//	runs PROG (the script's directory and environment) with its stdout a
//	pipe whose reader has already gone (closed: every write is EPIPE, as
//	under `| head -1` once head exited) or /dev/full (full: every write is
//	ENOSPC), its stderr the script's stderr, and fails unless it exits
//	with exactly N. Deterministic, unlike a shell pipeline's race.
func init() { extraCmds["stdoutto"] = cmdStdoutTo }

func cmdStdoutTo(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "stdoutto")
	const usage = "usage: stdoutto closed|full N PROG [ARGS...]"
	if len(args) < 3 {
		ts.Fatalf(usage)
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("%s: %v", usage, err)
	}
	var stdout *os.File
	switch args[0] {
	case "closed":
		r, w, err := os.Pipe()
		ts.Check(err)
		r.Close()
		stdout = w
	case "full":
		f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		ts.Check(err)
		stdout = f
	default:
		ts.Fatalf(usage)
	}
	defer stdout.Close()
	prog, err := lookPath(ts, args[2])
	ts.Check(err)
	cmd := exec.Command(prog, args[3:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	cmd.Stdout = stdout
	var errb stderrBuffer
	cmd.Stderr = &errb
	err = cmd.Run()
	ts.Stderr().Write(errb.b)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("stdoutto: running %s: %v", args[2], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s with stdout %s exited with %d, want %d", args[2], args[0], got, want)
	}
}

type stderrBuffer struct{ b []byte }

func (s *stderrBuffer) Write(p []byte) (int, error) { s.b = append(s.b, p...); return len(p), nil }
