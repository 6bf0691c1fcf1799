//go:build linux

package main

// The differential test's script command:
//
//	drainvs NAME [-want-pass] [-traffic-expect LO-HI] -- DRAIN-TEST-ARGS...
//	    runs `healthctl drain-test -o json DRAIN-TEST-ARGS...` with the truth
//	    client (internal/truthclient) sending its own fresh-connection
//	    requests through the shutdown: to the traffic URL (--traffic, else
//	    --inflight) and --ready every 20 ms, --live every 50 ms, a
//	    kept-alive connection to --live, and slow requests on --inflight
//	    kept in flight until the signal. It learns t=0 from
//	    drain-test's "sent SIGNAL to pid N" line and watches the pid in /proc
//	    itself. It writes NAME.json (drain-test's report), NAME.stderr,
//	    NAME.truth (the truth: "violated NAME: …", "open NAME: …", "seen: …",
//	    "truth: PASS|FAIL") and NAME.log (every truth request, by the time
//	    it was made), and fails unless drain-test's verdicts agree with the
//	    truth: every invariant the truth decided is FAILed exactly when a
//	    client saw it broken (docs/drain-test.md: the differential test).
//	    With -want-pass (a correct configuration) it also fails unless the
//	    truth is PASS; a run whose truth is not (a loaded machine makes real
//	    services drop connections now and then) is run again, three runs at
//	    most.
//
// Stacks live in testdata/stacks (set as $STACKS); scripts start with
// `require PROGRAM` for each program they run.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/healthctl/healthctl/internal/truthclient"
)

func init() {
	extraCmds["drainvs"] = cmdDrainVs
	extraSetup = append(extraSetup, func(env *testscript.Env) error {
		dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "stacks"))
		if err != nil {
			return err
		}
		env.Setenv("STACKS", dir)
		return nil
	})
}

var (
	sentLine    = regexp.MustCompile(`drain-test: sent (\S+) to pid (\d+)`)
	startedLine = regexp.MustCompile(`drain-test: started pid (\d+)`)
	readyLine   = regexp.MustCompile(`drain-test: readiness and liveness answer`)
	exitCodeRe  = regexp.MustCompile(`exit status (\d+)`)
	killedByRe  = regexp.MustCompile(`killed by (SIG[A-Z0-9]+)`)
)

// drainArg returns the value of --name in args ("" when absent).
func drainArg(args []string, name string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func durArg(ts *testscript.TestScript, args []string, name string, def time.Duration) time.Duration {
	v := drainArg(args, name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	ts.Check(err)
	return d
}

// truthRuns bounds how many drainvs runs go at once across the scripts
// running in parallel: each is a real stack under ~150 requests a second
// from two clients, and an overloaded machine makes services fail in ways
// that are true but not what the script is about.
var truthRuns = make(chan struct{}, 2)

func cmdDrainVs(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "drainvs")
	truthRuns <- struct{}{}
	defer func() { <-truthRuns }()
	const usage = "usage: drainvs NAME [-want-pass] [-traffic-expect LO-HI] -- DRAIN-TEST-ARGS..."
	if len(args) < 3 {
		ts.Fatalf(usage)
	}
	name, args := args[0], args[1:]
	var accept func(int) bool
	wantPass := false
	for len(args) > 0 && args[0] != "--" {
		switch {
		case args[0] == "-want-pass":
			wantPass = true
			args = args[1:]
		case args[0] == "-traffic-expect" && len(args) > 1:
			lo, hi, _ := strings.Cut(args[1], "-")
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				ts.Fatalf("drainvs -traffic-expect %q: want LO-HI", args[1])
			}
			accept = func(s int) bool { return s >= l && s <= h }
			args = args[2:]
		default:
			ts.Fatalf(usage)
		}
	}
	if len(args) == 0 {
		ts.Fatalf(usage)
	}
	dargs := args[1:]
	P := durArg(ts, dargs, "--pre-drain", 5*time.Second)
	S := durArg(ts, dargs, "--shutdown-timeout", 20*time.Second)
	flipMax := durArg(ts, dargs, "--ready-flip-max", time.Second)

	for attempt := 1; ; attempt++ {
		ok := drainvsOnce(ts, name, dargs, accept, P, S, flipMax)
		if ok || !wantPass {
			return
		}
		if attempt == 3 {
			ts.Fatalf("drainvs %s: a correct configuration, but the truth client saw failures three times (see %s.truth): the stack or its configuration no longer drains", name, name)
		}
		// drain-test agreed with what clients saw; a loaded machine makes
		// real services drop connections now and then: once more.
		ts.Logf("drainvs %s: the truth client saw failures in a correct configuration; running it once more", name)
	}
}

// drainvsOnce is one run of drain-test under the truth client; it fails
// the script when they disagree and returns whether the truth was PASS.
func drainvsOnce(ts *testscript.TestScript, name string, dargs []string, accept func(int) bool, P, S, flipMax time.Duration) bool {
	// Traffic as drain-test sends it (docs/drain-test.md): to --traffic,
	// else the --inflight URL, 10 a second then (a slow path), each
	// answered within --traffic-timeout, else min(S, 5 s): what a client
	// routed there waits for.
	traffic, trafficEvery := drainArg(dargs, "--traffic"), time.Duration(0)
	slow := drainArg(dargs, "--inflight")
	if strings.HasPrefix(slow, "grpc") {
		slow = "" // the truth client speaks HTTP/1.1: a gRPC call is drain-test's alone
	}
	if traffic == "" {
		traffic, trafficEvery = slow, 100*time.Millisecond
	}
	trafficWindow := durArg(ts, dargs, "--traffic-timeout", max(time.Second, min(S, 5*time.Second)))
	client := truthclient.Start(truthclient.Config{
		Traffic: traffic, Ready: drainArg(dargs, "--ready"), Live: drainArg(dargs, "--live"),
		Slow: slow, Inflight: 2, TrafficAccept: accept, KeepAlive: drainArg(dargs, "--live"),
		SlowWindow: S + 5*time.Second, TrafficInterval: trafficEvery, TrafficWindow: trafficWindow,
		// As drain-test: no new traffic after P.
		TrafficFor: P,
	})
	prog, err := lookPath(ts, "healthctl")
	ts.Check(err)
	cmd := exec.Command(prog, append([]string{"drain-test", "-o", "json"}, dargs...)...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	stdout, err := os.Create(ts.MkAbs(name + ".json"))
	ts.Check(err)
	defer stdout.Close()
	cmd.Stdout = stdout
	pr, err := cmd.StderrPipe()
	ts.Check(err)
	errf, err := os.Create(ts.MkAbs(name + ".stderr"))
	ts.Check(err)
	defer errf.Close()
	ts.Check(cmd.Start())

	var (
		mu      sync.Mutex
		t0      time.Time
		sentSig string
		gone    = make(chan goneInfo, 1)
		started = make(chan int, 1)
	)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			now := time.Now()
			fmt.Fprintln(errf, line)
			if readyLine.MatchString(line) {
				// drain-test starts its in-flight requests now: two of
				// the truth's own, as young at the signal as they are.
				client.AddInflight(2)
			}
			if m := startedLine.FindStringSubmatch(line); m != nil {
				pid, _ := strconv.Atoi(m[1])
				select {
				case started <- pid:
				default:
				}
			}
			if m := sentLine.FindStringSubmatch(line); m != nil {
				mu.Lock()
				if t0.IsZero() {
					t0, sentSig = now, m[1]
					client.Signalled()
					pid, _ := strconv.Atoi(m[2])
					go watchGone(pid, gone)
				}
				mu.Unlock()
			}
		}
	}()
	<-readDone
	werr := cmd.Wait()
	recs := client.Stop()
	mu.Lock()
	defer mu.Unlock()
	if t0.IsZero() {
		ts.Fatalf("drainvs %s: drain-test never sent the signal (%v); its stderr is in %s.stderr", name, werr, name)
	}

	var rep struct {
		ExitCode    int    `json:"exit_code"`
		SignalledAt string `json:"signalled_at"`
		Verdicts    []struct {
			Name    string `json:"name"`
			OK      bool   `json:"ok"`
			Skipped bool   `json:"skipped"`
			Detail  string `json:"detail"`
		} `json:"verdicts"`
		Timeline []struct {
			TMS    float64 `json:"t_ms"`
			Event  string  `json:"event"`
			Detail string  `json:"detail"`
		} `json:"timeline"`
	}
	data, err := os.ReadFile(ts.MkAbs(name + ".json"))
	ts.Check(err)
	if err := json.Unmarshal(data, &rep); err != nil {
		ts.Fatalf("drainvs %s: drain-test's JSON: %v (%s)", name, err, data)
	}
	// t=0 is drain-test's own: when it sent the signal, not when its
	// progress line was read here (on a loaded machine tens of ms later,
	// which would move every request the truth saw that much earlier).
	if rep.SignalledAt == "" {
		ts.Fatalf("drainvs %s: drain-test's JSON has no signalled_at", name)
	}
	at, err := time.Parse(time.RFC3339Nano, rep.SignalledAt)
	ts.Check(err)
	if lag := t0.Sub(at); lag < 0 || lag > 2*time.Second {
		ts.Fatalf("drainvs %s: signalled_at %s is %v from the moment its progress line was read", name, rep.SignalledAt, lag)
	}
	ts.Logf("drainvs %s: the progress line was read %v after the signal", name, t0.Sub(at).Round(time.Millisecond))
	p := truthclient.Params{T0: at, P: P, S: S, FlipMax: flipMax, PollInterval: 20 * time.Millisecond, Sent: signalNumber(sentSig)}
	// drain-test returns only once what it started is gone: the watch has
	// seen it, or is about to.
	select {
	case g := <-gone:
		p.Gone, p.GoneAt, p.LeftRunning = true, g.at, g.left
	case <-time.After(5 * time.Second):
	}
	// The exit status: only drain-test, the service's parent, can read it;
	// the truth applies its own rule to the raw status.
	for _, e := range rep.Timeline {
		switch e.Event {
		case "killed":
			p.Killed = true
		case "exit":
			if m := exitCodeRe.FindStringSubmatch(e.Detail); m != nil {
				p.ExitKnown = true
				p.ExitCode, _ = strconv.Atoi(m[1])
			} else if m := killedByRe.FindStringSubmatch(e.Detail); m != nil {
				p.ExitKnown, p.ExitSignal = true, signalNumber(m[1])
			}
		}
	}
	truth := truthclient.Judge(recs, p)
	for _, v := range rep.Verdicts {
		if why, ok := truth.Violated[v.Name]; ok && v.Skipped && strings.HasPrefix(v.Detail, "not judged, drain-test itself was starved") {
			// drain-test names no verdict it could have faked while it
			// was starved (exit 9, or the row skipped): neither way.
			delete(truth.Violated, v.Name)
			truth.Open[v.Name] = why + " (drain-test was starved: " + v.Name + " not judged)"
		}
	}
	ts.Check(os.WriteFile(ts.MkAbs(name+".truth"), []byte(truth.String()), 0o644))
	ts.Check(os.WriteFile(ts.MkAbs(name+".log"), []byte(truthclient.Log(recs, t0)), 0o644))
	var failed, table []string
	for _, v := range rep.Verdicts {
		state := "ok"
		if !v.OK {
			failed = append(failed, v.Name)
			state = "FAIL"
		} else if v.Skipped {
			state = "skipped"
		}
		table = append(table, fmt.Sprintf("  %-28s %-7s %s", v.Name, state, v.Detail))
	}
	ts.Logf("drainvs %s: truth:\n%sdrain-test (exit %d):\n%s", name, truth, rep.ExitCode, strings.Join(table, "\n"))
	if d := truthclient.Agree(truth, failed); len(d) > 0 {
		ts.Fatalf("drainvs %s: drain-test disagrees with what clients saw:\n  %s", name, strings.Join(d, "\n  "))
	}
	// Where drain-test saw the listener fail, its time must be one when
	// clients failed too: a failed connection of the truth client made
	// within 50 ms of it. Also when the truth left the invariant open (a
	// failure at P's edge): drain-test's FAIL at 0 ms of a listener that
	// closed at P is not the truth's failure at P.
	madeAt := regexp.MustCompile(`made at (-?\d+) ms`)
	for _, v := range rep.Verdicts {
		if v.OK || v.Name != truthclient.ListenerClosedEarly {
			continue
		}
		why := truth.Violated[v.Name]
		if why == "" {
			why = "open: " + truth.Open[v.Name]
		}
		d := madeAt.FindStringSubmatch(v.Detail)
		if d == nil {
			ts.Fatalf("drainvs %s: %s: no \"made at N ms\" in %q", name, v.Name, v.Detail)
		}
		dm, _ := strconv.Atoi(d[1])
		at := t0.Add(time.Duration(dm) * time.Millisecond)
		near := false
		for _, r := range recs {
			if r.Kind != truthclient.KindInflight && r.Kind != truthclient.KindKeepAlive && !r.Outcome.Answered() && r.Made.Sub(at).Abs() <= 50*time.Millisecond {
				near = true
				break
			}
		}
		if !near {
			ts.Fatalf("drainvs %s: %s at %d ms, but no connection of the truth client made within 50 ms of it failed (the truth: %s)", name, v.Name, dm, why)
		}
	}
	if rep.ExitCode != 0 && rep.ExitCode != 7 {
		ts.Fatalf("drainvs %s: drain-test exited %d: neither PASS (0) nor FAIL (7)", name, rep.ExitCode)
	}
	return truth.OK()
}

// goneInfo is when the signalled pid was seen gone, and which members of
// its process group still ran 100 ms later.
type goneInfo struct {
	at   time.Time
	left []int
}

// watchGone sends when pid is gone (or a zombie), polling /proc every 2 ms
// for at most a minute, with the group members still running 100 ms after.
func watchGone(pid int, gone chan<- goneInfo) {
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if _, _, ok := procStat(pid); ok {
			continue
		}
		g := goneInfo{at: time.Now()}
		time.Sleep(100 * time.Millisecond)
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			n, err := strconv.Atoi(e.Name())
			if err != nil || n == pid {
				continue
			}
			if pgrp, _, ok := procStat(n); ok && pgrp == pid {
				g.left = append(g.left, n)
			}
		}
		gone <- g
		return
	}
}

// procStat reads a process's group from /proc; ok is false when it is gone
// or a zombie.
func procStat(pid int) (pgrp int, state byte, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
		return 0, 0, false
	}
	pgrp, _ = strconv.Atoi(f[2])
	return pgrp, f[0][0], true
}

func signalNumber(name string) int {
	return int(unix.SignalNum("SIG" + strings.TrimPrefix(strings.ToUpper(name), "SIG")))
}
