// Script commands for the demo scripts (testdata/script/demo_*.txtar):
//
//	stopearly [-signal INT|TERM] -code N REGEXP CMD [ARGS...]
//	    runs CMD (found in the script's PATH, with the script's environment
//	    as it was at setup, and its TMPDIR and PATH now) with stdout on a
//	    pipe, reads stdout until a line matches REGEXP, then stops reading
//	    and closes the pipe (the reader of `healthctl demo | head -1` going
//	    away) or, with -signal, sends that signal and keeps reading. Fails
//	    unless CMD exits with N within 60s. What CMD wrote becomes stdout
//	    and stderr for the checks that follow.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	extraCmds["stopearly"] = cmdStopEarly
	extraSetup = append(extraSetup, func(env *testscript.Env) error {
		env.Values[setupEnvKey{}] = append([]string(nil), env.Vars...)
		return nil
	})
}

// setupEnvKey is the Env.Values key of the script's environment at setup.
type setupEnvKey struct{}

func cmdStopEarly(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "stopearly")
	const usage = "usage: stopearly [-signal INT|TERM] -code N REGEXP CMD [ARGS...]"
	fs := flag.NewFlagSet("stopearly", flag.ContinueOnError)
	sigName := fs.String("signal", "", "INT or TERM")
	code := fs.Int("code", -1, "the exit code wanted")
	if err := fs.Parse(args); err != nil || fs.NArg() < 2 || *code < 0 {
		ts.Fatalf(usage)
	}
	var sig os.Signal
	switch *sigName {
	case "":
	case "INT":
		sig = syscall.SIGINT
	case "TERM":
		sig = syscall.SIGTERM
	default:
		ts.Fatalf(usage)
	}
	re, err := regexp.Compile(fs.Arg(0))
	ts.Check(err)
	prog := fs.Arg(1)
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, prog); !strings.Contains(prog, "/") && fileExists(p) {
			prog = p
			break
		}
	}
	cmd := exec.Command(prog, fs.Args()[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = append(ts.Value(setupEnvKey{}).([]string), "TMPDIR="+ts.Getenv("TMPDIR"), "PATH="+ts.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	r, w, err := os.Pipe()
	ts.Check(err)
	cmd.Stdout = w
	ts.Check(cmd.Start())
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()

	var stdout bytes.Buffer
	br := bufio.NewReader(r)
	matched := false
	for !matched {
		line, err := br.ReadString('\n')
		stdout.WriteString(line)
		matched = re.MatchString(strings.TrimSuffix(line, "\n"))
		if err != nil {
			break
		}
	}
	if !matched {
		r.Close()
		<-done
		ts.Fatalf("stopearly: no line of stdout matched %q:\n%s%s", re, stdout.String(), stderr.String())
	}
	if sig == nil {
		r.Close()
	} else {
		ts.Check(cmd.Process.Signal(sig))
		io.Copy(&stdout, br)
		r.Close()
	}
	err = <-done
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			got = 128 + int(ws.Signal())
			ts.Logf("stopearly: %s was killed by %v", fs.Arg(1), ws.Signal())
		}
	} else if err != nil {
		ts.Fatalf("stopearly: %v", err)
	}
	ts.Stdout().Write(stdout.Bytes())
	ts.Stderr().Write(stderr.Bytes())
	if got != *code {
		ts.Fatalf("stopearly: %s exited with %d, want %d\nstderr:\n%s", fs.Arg(1), got, *code, stderr.String())
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
