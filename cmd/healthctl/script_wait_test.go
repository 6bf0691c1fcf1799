// Script commands for the wait-healthy scripts (testdata/script/wait_*.txtar):
//
//	flapd NAME STATUS...
//	    an HTTP fixture that answers the given statuses in order, one per
//	    request, then repeats the last one; sets $NAME_URL.
//	sigwhen [-group] INT|TERM|QUIT WANT FILE REGEXP PROG [ARGS...]
//	    starts PROG (found on the script's PATH, with the script's
//	    environment), waits (10s at most) until FILE matches REGEXP, sends it
//	    the signal, waits (10s at most) for it to exit, and fails unless its
//	    exit code is WANT; its stdout and stderr are then what the stdout and
//	    stderr commands check. The built-in kill sends only KILL or INT.
//	    With -group PROG runs in a process group of its own and the signal
//	    goes to that whole group, as a terminal's Ctrl-C does.
//	waitrate FILE PERSEC MIN
//	    reads wait-healthy's final JSON object from FILE (cp stdout FILE) and
//	    fails unless MIN <= attempts <= PERSEC * elapsed seconds + 1.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
)

func init() {
	extraCmds["flapd"] = cmdFlapd
	extraCmds["sigwhen"] = cmdSigWhen
	extraCmds["waitrate"] = cmdWaitRate
}

// cmdFlapd implements flapd NAME STATUS...
func cmdFlapd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "flapd")
	const usage = "usage: flapd NAME STATUS..."
	if len(args) < 2 {
		ts.Fatalf(usage)
	}
	var statuses []int
	for _, a := range args[1:] {
		n, err := strconv.Atoi(a)
		if err != nil || n < 100 || n > 599 {
			ts.Fatalf("%s: bad status %q", usage, a)
		}
		statuses = append(statuses, n)
	}
	var (
		mu sync.Mutex
		n  int
	)
	l, err := net.Listen("tcp4", fixture.Loopback4+":0")
	ts.Check(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		st := statuses[min(n, len(statuses)-1)]
		n++
		mu.Unlock()
		w.WriteHeader(st)
		w.Write([]byte(http.StatusText(st) + "\n"))
	})}
	go srv.Serve(l)
	ts.Defer(func() { srv.Close() })
	addr := l.Addr().(*net.TCPAddr)
	setAddrVars(ts, args[0], "http://"+addr.String(), addr.String(), addr.Port)
}

// cmdSigWhen implements sigwhen INT|TERM WANT FILE REGEXP PROG [ARGS...].
func cmdSigWhen(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "sigwhen")
	const usage = "usage: sigwhen [-group] INT|TERM|QUIT WANT FILE REGEXP PROG [ARGS...]"
	group := len(args) > 0 && args[0] == "-group"
	if group {
		args = args[1:]
	}
	if len(args) < 5 {
		ts.Fatalf(usage)
	}
	var sig os.Signal
	switch args[0] {
	case "INT":
		sig = syscall.SIGINT
	case "TERM":
		sig = syscall.SIGTERM
	case "QUIT":
		sig = syscall.SIGQUIT
	default:
		ts.Fatalf("%s: bad signal %q", usage, args[0])
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("%s: %v", usage, err)
	}
	file := ts.MkAbs(args[2])
	re, err := regexp.Compile(args[3])
	if err != nil {
		ts.Fatalf("%s: %v", usage, err)
	}
	prog, err := lookPath(ts, args[4])
	ts.Check(err)

	cmd := exec.Command(prog, args[5:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if group {
		cmd.SysProcAttr = stackfix.ProcessGroupAttr()
	}
	ts.Check(cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	report := func() {
		ts.Stdout().Write(stdout.Bytes())
		ts.Stderr().Write(stderr.Bytes())
	}

	ready := fixture.WaitFor(10*time.Second, func() bool {
		b, err := os.ReadFile(file)
		return err == nil && re.Match(b)
	})
	if !ready {
		cmd.Process.Kill()
		<-exited
		report()
		ts.Fatalf("sigwhen: %s did not match %q within 10s", args[2], args[3])
	}
	if group {
		ts.Check(stackfix.SignalGroup(cmd.Process.Pid, sig.(syscall.Signal)))
	} else {
		ts.Check(cmd.Process.Signal(sig))
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-exited
		report()
		ts.Fatalf("sigwhen: %s still running 10s after SIG%s", args[4], args[0])
	}
	report()
	got := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		got = 128 + int(ws.Signal()) // as a shell reports a process a signal killed
	}
	if got != want {
		ts.Fatalf("sigwhen: %s exited with %d (%v), want %d", args[4], got, cmd.ProcessState, want)
	}
}

// lookPath finds prog on the script's PATH (where the test binary is
// installed as healthctl).
func lookPath(ts *testscript.TestScript, prog string) (string, error) {
	if strings.Contains(prog, "/") {
		return ts.MkAbs(prog), nil
	}
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, prog)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("sigwhen: " + prog + " not found on the script's PATH")
}

// scriptEnv approximates the script's environment for a process started
// outside ts.Exec: the test's own, with the variables the script setup
// controls taken from the script.
func scriptEnv(ts *testscript.TestScript) []string {
	controlled := append([]string{"PATH", "HOME", "XDG_CONFIG_HOME", "HEALTHCTL_DNS_SERVER", "WORK", "TMPDIR", "GORACE", reasonsFileVar}, proxyVars...)
	skip := map[string]bool{"NO_COLOR": true}
	for _, k := range controlled {
		skip[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if skip[k] || strings.HasPrefix(k, "HEALTHCTL_") {
			continue
		}
		env = append(env, kv)
	}
	for _, k := range controlled {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

// cmdWaitRate implements waitrate FILE PERSEC MIN.
func cmdWaitRate(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "waitrate")
	const usage = "usage: waitrate FILE PERSEC MIN"
	if len(args) != 3 {
		ts.Fatalf(usage)
	}
	perSec, err1 := strconv.ParseFloat(args[1], 64)
	minimum, err2 := strconv.Atoi(args[2])
	if err1 != nil || err2 != nil {
		ts.Fatalf(usage)
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var j struct {
		Attempts  *int     `json:"attempts"`
		ElapsedMS *float64 `json:"elapsed_ms"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &j); err != nil || j.Attempts == nil || j.ElapsedMS == nil {
		ts.Fatalf("waitrate: %s: not a wait-healthy object (%v): %s", args[0], err, data)
	}
	limit := int(perSec**j.ElapsedMS/1000) + 1
	ts.Logf("waitrate: %d attempts in %.1fms: want %d..%d", *j.Attempts, *j.ElapsedMS, minimum, limit)
	if *j.Attempts > limit || *j.Attempts < minimum {
		ts.Fatalf("waitrate: %d attempts in %.1fms, want between %d and %d (%v a second + 1)", *j.Attempts, *j.ElapsedMS, minimum, limit, perSec)
	}
}
