// Script commands for the watch scripts (testdata/script/watch_*.txtar):
//
//	switchd NAME up|down|hang|503
//	    an HTTP fixture on a fixed loopback port whose state the script
//	    switches between runs (fixture.Switch); sets $NAME_URL,
//	    $NAME_HOSTPORT, $NAME_PORT.
//	switch NAME up|down|hang|503
//	    switches the switchd fixture NAME.
//	unixnow VAR [OFFSET]
//	    sets $VAR to the current unix time in seconds, plus OFFSET (a Go
//	    duration, may be negative).
//	statecheck FILE [sweeps=N] [targets=N] [has=NAME]... [gone=NAME]... [pending=NAME]... [notpending=NAME]...
//	    parses FILE as a watch state file (internal/state) and fails unless
//	    it is valid and meets every condition (targets: how many targets it
//	    holds; pending: the target's --on-redeploy started and never
//	    reported its end).
//	holdlock FILE
//	    holds the lock of the state file FILE (FILE.lock) until the script
//	    ends, as another watch run would.
//	promcheck FILE
//	    parses FILE with prometheus/common/expfmt's text parser, and runs
//	    `promtool check metrics` on it when promtool is installed.
//	envsubst SRC DST
//	    writes SRC to DST with $VAR and ${VAR} replaced by the script's
//	    variables (for targets files that name fixture URLs).
//	sweepwithin FILE DURATION
//	    reads watch's JSON lines from FILE (cp stdout FILE) and fails unless
//	    the sweep line's duration_ms is at most DURATION.
//	promdir DIR
//	    reads every *.prom file in DIR as node_exporter's textfile collector
//	    does (prometheus/common/expfmt's parser), merges them, and fails on
//	    what makes node_exporter drop metrics: a series (name and labels)
//	    in two files, or one name with two TYPEs or HELPs. Prints every
//	    series, one per line (name{labels}), to stdout for grep.
//	bgstart NAME PROG [ARGS...]
//	    starts PROG in the background (the script's directory and
//	    environment), its stdout and stderr going to the files NAME.stdout
//	    and NAME.stderr (so waitfile can wait on them). Killed when the
//	    script ends.
//	bgsignal [-when FILE REGEXP] NAME KILL|TERM|INT|HUP
//	    sends the signal to the bgstart process NAME; with -when, first
//	    waits (at most 10s) until FILE matches REGEXP or the process has
//	    exited on its own (then it sends nothing).
//	bgwait NAME WANT
//	    waits (at most 10s) for the bgstart process NAME to exit, copies
//	    its output to the script's stdout and stderr, and fails unless it
//	    exited with code WANT, or WANT is "killed" and a signal killed it.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/output"
	statestore "github.com/healthctl/healthctl/internal/state"
)

func init() {
	extraCmds["switchd"] = cmdSwitchd
	extraCmds["switch"] = cmdSwitch
	extraCmds["unixnow"] = cmdUnixNow
	extraCmds["statecheck"] = cmdStateCheck
	extraCmds["holdlock"] = cmdHoldLock
	extraCmds["promcheck"] = cmdPromCheck
	extraCmds["sweepwithin"] = cmdSweepWithin
	extraCmds["envsubst"] = cmdEnvSubst
	extraCmds["promdir"] = cmdPromDir
	extraCmds["bgstart"] = cmdBgStart
	extraCmds["bgsignal"] = cmdBgSignal
	extraCmds["bgwait"] = cmdBgWait
	extraSetup = append(extraSetup, func(env *testscript.Env) error {
		env.Values[switchesKey{}] = &switches{m: map[string]*fixture.Switch{}}
		env.Values[bgKey{}] = &bgProcs{m: map[string]*bgProc{}}
		return nil
	})
}

// switchesKey is the Env.Values key of a script's switchd fixtures.
type switchesKey struct{}

type switches struct {
	mu sync.Mutex
	m  map[string]*fixture.Switch
}

func cmdSwitchd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "switchd")
	if len(args) != 2 {
		ts.Fatalf("usage: switchd NAME up|down|hang|503")
	}
	sw, err := fixture.NewSwitch(cleaner(ts), fixture.SwitchState(args[1]))
	ts.Check(err)
	all := ts.Value(switchesKey{}).(*switches)
	all.mu.Lock()
	all.m[args[0]] = sw
	all.mu.Unlock()
	setAddrVars(ts, args[0], sw.URL(), sw.Addr, sw.Port)
}

func cmdSwitch(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "switch")
	if len(args) != 2 {
		ts.Fatalf("usage: switch NAME up|down|hang|503")
	}
	all := ts.Value(switchesKey{}).(*switches)
	all.mu.Lock()
	sw := all.m[args[0]]
	all.mu.Unlock()
	if sw == nil {
		ts.Fatalf("switch: no switchd fixture %q", args[0])
	}
	ts.Check(sw.Set(fixture.SwitchState(args[1])))
}

func cmdUnixNow(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "unixnow")
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: unixnow VAR [OFFSET]")
	}
	t := time.Now()
	if len(args) == 2 {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		t = t.Add(d)
	}
	ts.Setenv(args[0], strconv.FormatInt(t.Unix(), 10))
}

func cmdStateCheck(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "statecheck")
	if len(args) < 1 {
		ts.Fatalf("usage: statecheck FILE [sweeps=N] [targets=N] [has=NAME]... [gone=NAME]...")
	}
	path := ts.MkAbs(args[0])
	if _, err := os.Stat(path); err != nil {
		ts.Fatalf("statecheck: %v", err)
	}
	f, err := statestore.Read(path)
	if err != nil {
		ts.Fatalf("statecheck: %v", err)
	}
	for _, c := range args[1:] {
		k, v, _ := strings.Cut(c, "=")
		switch k {
		case "sweeps":
			if fmt.Sprint(f.Sweeps) != v {
				ts.Fatalf("statecheck: %d sweeps recorded, want %s", f.Sweeps, v)
			}
		case "targets":
			if fmt.Sprint(len(f.Targets)) != v {
				ts.Fatalf("statecheck: %d targets in the state, want %s", len(f.Targets), v)
			}
		case "has":
			if _, ok := f.Targets[v]; !ok {
				ts.Fatalf("statecheck: no target %q in the state", v)
			}
		case "gone":
			if _, ok := f.Targets[v]; ok {
				ts.Fatalf("statecheck: target %q still in the state", v)
			}
		case "pending":
			if !f.Targets[v].HookPending {
				ts.Fatalf("statecheck: target %q has no pending hook", v)
			}
		case "notpending":
			if f.Targets[v].HookPending {
				ts.Fatalf("statecheck: target %q has a pending hook", v)
			}
		default:
			ts.Fatalf("statecheck: unknown condition %q", c)
		}
	}
}

func cmdHoldLock(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "holdlock")
	if len(args) != 1 {
		ts.Fatalf("usage: holdlock FILE")
	}
	lk := flock.New(statestore.LockPath(ts.MkAbs(args[0])))
	ok, err := lk.TryLock()
	if err != nil || !ok {
		ts.Fatalf("holdlock: %v (locked: %v)", err, ok)
	}
	ts.Defer(func() { lk.Close() })
}

func cmdPromCheck(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "promcheck")
	if len(args) != 1 {
		ts.Fatalf("usage: promcheck FILE")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		ts.Fatalf("promcheck: expfmt: %v", err)
	}
	if len(fams) == 0 {
		ts.Fatalf("promcheck: no metrics")
	}
	if pt, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(pt, "check", "metrics")
		cmd.Stdin = bytes.NewReader(data)
		if out, err := cmd.CombinedOutput(); err != nil {
			ts.Fatalf("promcheck: promtool check metrics: %v\n%s", err, out)
		}
		ts.Logf("promtool check metrics: ok")
	} else {
		ts.Logf("promtool not installed: checked with expfmt only")
	}
}

func cmdSweepWithin(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "sweepwithin")
	if len(args) != 2 {
		ts.Fatalf("usage: sweepwithin FILE DURATION")
	}
	max, err := time.ParseDuration(args[1])
	ts.Check(err)
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var l struct {
			Sweep *struct {
				DurationMS float64 `json:"duration_ms"`
			} `json:"sweep"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Sweep == nil {
			continue
		}
		got := time.Duration(l.Sweep.DurationMS * float64(time.Millisecond))
		if got > max {
			ts.Fatalf("sweepwithin: the sweep took %v, more than %v", got, max)
		}
		ts.Logf("sweep took %v (at most %v)", got, max)
		return
	}
	ts.Fatalf("sweepwithin: no sweep line in %s", args[0])
}

func cmdEnvSubst(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "envsubst")
	if len(args) != 2 {
		ts.Fatalf("usage: envsubst SRC DST")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(os.Expand(string(data), ts.Getenv)), 0o644))
}

// TestWatchStateSurvivesSIGKILL kills `watch --once --state F` (the real
// binary) at random moments of its life, over and over, and checks that
// the state file always parses: the old content or the new, never torn.
func TestWatchStateSurvivesSIGKILL(t *testing.T) {
	besideScripts(t)
	if testing.Short() {
		t.Skip("short")
	}
	bin, err := exec.LookPath("healthctl")
	if err != nil {
		t.Skipf("the healthctl test binary is not on PATH: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/down") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	targets := filepath.Join(dir, "targets.yaml")
	var b strings.Builder
	b.WriteString("targets:\n")
	for i := range 20 {
		path := "up"
		if i%3 == 0 {
			path = "down"
		}
		fmt.Fprintf(&b, "  - name: t%d\n    url: %s/%d/%s\n", i, srv.URL, i, path)
	}
	if err := os.WriteFile(targets, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(dir, "state.json")
	run := func(ctx context.Context) *exec.Cmd {
		c := exec.CommandContext(ctx, bin, "watch", "--once", "--state", statePath, "--targets", targets,
			"--failure-threshold", "3", "--grace", "0s", "-o", "json", "--lock-timeout", "20s")
		// The race runtime sleeps 1s at exit by default (atexit_sleep_ms).
		c.Env = append(os.Environ(), "NO_PROXY=*", "GORACE=halt_on_error=1 atexit_sleep_ms=0")
		return c
	}
	// How long one run lives, to spread the kills over its whole life: the
	// median of three (the first is a cold start).
	var lives []time.Duration
	for range 3 {
		start := time.Now()
		if out, err := run(context.Background()).CombinedOutput(); err != nil && !strings.Contains(err.Error(), "exit status 8") {
			t.Fatalf("a full run failed: %v\n%s", err, out)
		}
		lives = append(lives, time.Since(start))
	}
	slices.Sort(lives)
	life := lives[1]
	t.Logf("one run takes %v", life)
	// Kills are spread over the whole life of a run, every other one over
	// its second half, where the state is written. A kill that came after
	// the exit does not count. On a loaded machine runs slow down and speed
	// up again, and fewer kills land: the test is bounded by its tries, not
	// by a clock, and needs enough landed kills to mean something.
	const want, maxTries, enough = 60, 400, 15
	tries, landed := 0, 0
	for landed < want {
		if tries == maxTries {
			if landed < enough {
				t.Fatalf("only %d of %d kills landed while a run was alive (want at least %d)", landed, tries, enough)
			}
			break
		}
		tries++
		c := run(context.Background())
		started := time.Now()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		from, to := time.Duration(0), life*21/20
		if tries%2 == 0 {
			from = life * 6 / 10
		}
		time.Sleep(from + time.Duration(rand.Int64N(int64(to-from))))
		_ = c.Process.Signal(syscall.SIGKILL)
		err := c.Wait()
		if ee, ok := err.(*exec.ExitError); ok && ee.Sys().(syscall.WaitStatus).Signaled() {
			landed++
		} else {
			// It finished before the kill: a run lives that long now
			// (the machine's load changes it), and the next kills aim
			// inside that.
			life = (life + time.Since(started)) / 2
		}
		if _, err := os.Stat(statePath); err != nil {
			continue
		}
		if _, err := statestore.Read(statePath); err != nil {
			t.Fatalf("after kill %d the state does not parse: %v", landed, err)
		}
	}
	t.Logf("%d runs, %d killed while running; the state parsed every time", tries, landed)
	if _, err := statestore.Read(statePath); err != nil {
		t.Fatal(err)
	}
}

// TestWatchListen runs a long-running watch in-process with --listen and
// reads /metrics and /healthz from it.
func TestWatchListen(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer up.Close()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	streams, _, errb := output.Test(false)
	a := testFactory(streams, func(string) string { return "" })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, a, []string{"watch", "--interval", "100ms", "--listen", addr, up.URL + "/health"})
	}()
	var body string
	ok := fixture.WaitFor(10*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return strings.Contains(body, "probe_success{")
	})
	if !ok {
		cancel()
		t.Fatalf("no metrics from --listen %s (last %q; stderr %s)", addr, body, errb)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := p.TextToMetricFamilies(strings.NewReader(body)); err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz: %v %v", err, resp)
	}
	resp.Body.Close()
	cancel()
	select {
	case code := <-done:
		if code != exitcode.SIGINT {
			t.Fatalf("exit %d, want %d", code, exitcode.SIGINT)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop")
	}
}

// TestWatchTTYTable: on a terminal (streams forced to TTY) watch prints a
// coloured table and the sweep line, not JSON.
func TestWatchTTYTable(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer up.Close()
	streams, out, errb := output.Test(true)
	a := testFactory(streams, func(string) string { return "" })
	if code := run(context.Background(), a, []string{"watch", "--once", up.URL + "/health"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	got := out.String()
	for _, want := range []string{"TARGET", "OUTCOME", "\x1b[", "stay", "sweep 1: 1 target, 1 pass"} {
		if !strings.Contains(got, want) {
			t.Errorf("TTY output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"schema_version"`) {
		t.Errorf("TTY output is JSON:\n%s", got)
	}
}

// bgKey is the Env.Values key of a script's bgstart processes.
type bgKey struct{}

type bgProcs struct {
	mu sync.Mutex
	m  map[string]*bgProc
}

type bgProc struct {
	name    string
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{}
}

func bgLookup(ts *testscript.TestScript, name string) *bgProc {
	all := ts.Value(bgKey{}).(*bgProcs)
	all.mu.Lock()
	defer all.mu.Unlock()
	p := all.m[name]
	if p == nil {
		ts.Fatalf("no bgstart process %q", name)
	}
	return p
}

func cmdBgStart(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "bgstart")
	if len(args) < 2 {
		ts.Fatalf("usage: bgstart NAME PROG [ARGS...]")
	}
	prog, err := lookPath(ts, args[1])
	ts.Check(err)
	cmd := exec.Command(prog, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	out, err := os.Create(ts.MkAbs(args[0] + ".stdout"))
	ts.Check(err)
	errf, err := os.Create(ts.MkAbs(args[0] + ".stderr"))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = out, errf
	ts.Check(cmd.Start())
	p := &bgProc{name: args[0], cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		out.Close()
		errf.Close()
		close(p.exited)
	}()
	ts.Defer(func() {
		select {
		case <-p.exited:
		default:
			cmd.Process.Kill()
			<-p.exited
		}
	})
	all := ts.Value(bgKey{}).(*bgProcs)
	all.mu.Lock()
	all.m[args[0]] = p
	all.mu.Unlock()
}

func cmdBgSignal(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "bgsignal")
	const usage = "usage: bgsignal [-when FILE REGEXP] NAME KILL|TERM|INT|HUP"
	var file string
	var re *regexp.Regexp
	if len(args) > 0 && args[0] == "-when" {
		if len(args) < 3 {
			ts.Fatalf(usage)
		}
		file = ts.MkAbs(args[1])
		var err error
		if re, err = regexp.Compile(args[2]); err != nil {
			ts.Fatalf("%s: %v", usage, err)
		}
		args = args[3:]
	}
	if len(args) != 2 {
		ts.Fatalf(usage)
	}
	p := bgLookup(ts, args[0])
	sig := map[string]os.Signal{"KILL": os.Kill, "TERM": syscall.SIGTERM, "INT": os.Interrupt, "HUP": syscall.SIGHUP}[args[1]]
	if sig == nil {
		ts.Fatalf("%s: bad signal %q", usage, args[1])
	}
	if re != nil {
		exited := false
		ok := fixture.WaitFor(10*time.Second, func() bool {
			select {
			case <-p.exited:
				exited = true
				return true
			default:
			}
			b, err := os.ReadFile(file)
			return err == nil && re.Match(b)
		})
		if !ok {
			ts.Fatalf("bgsignal: %s did not match %q within 10s", file, re)
		}
		if exited {
			ts.Logf("bgsignal: %s exited on its own: no SIG%s sent", p.name, args[1])
			return
		}
	}
	ts.Check(p.cmd.Process.Signal(sig))
}

func cmdBgWait(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "bgwait")
	if len(args) != 2 {
		ts.Fatalf("usage: bgwait NAME WANT")
	}
	p := bgLookup(ts, args[0])
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
		ts.Fatalf("bgwait: %s still running after 10s", p.name)
	}
	for _, f := range []struct {
		ext string
		w   io.Writer
	}{{".stdout", ts.Stdout()}, {".stderr", ts.Stderr()}} {
		b, err := os.ReadFile(ts.MkAbs(p.name + f.ext))
		ts.Check(err)
		f.w.Write(b)
	}
	st := p.cmd.ProcessState
	if args[1] == "killed" {
		if ws, ok := st.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			ts.Fatalf("bgwait: %s ended with %v, want killed by a signal", p.name, st)
		}
		return
	}
	if got := strconv.Itoa(st.ExitCode()); got != args[1] {
		ts.Fatalf("bgwait: %s exited with %s (%v), want %s", p.name, got, st, args[1])
	}
}

func cmdPromDir(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "promdir")
	if len(args) != 1 {
		ts.Fatalf("usage: promdir DIR")
	}
	files, err := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), "*.prom"))
	ts.Check(err)
	if len(files) == 0 {
		ts.Fatalf("promdir: no *.prom files in %s", args[0])
	}
	type family struct{ typ, help, file string }
	fams := map[string]family{}
	series := map[string]string{}
	var lines []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		ts.Check(err)
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(bytes.NewReader(data))
		if err != nil {
			ts.Fatalf("promdir: %s: %v", filepath.Base(file), err)
		}
		for name, mf := range mfs {
			f := family{typ: mf.GetType().String(), help: mf.GetHelp(), file: filepath.Base(file)}
			if prev, ok := fams[name]; ok && (prev.typ != f.typ || prev.help != f.help) {
				ts.Fatalf("promdir: %s: TYPE or HELP differs between %s and %s", name, prev.file, f.file)
			}
			fams[name] = f
			for _, m := range mf.GetMetric() {
				var ls []string
				for _, l := range m.GetLabel() {
					ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
				}
				slices.Sort(ls)
				key := name + "{" + strings.Join(ls, ",") + "}"
				if prev, dup := series[key]; dup {
					ts.Fatalf("promdir: %s in both %s and %s: node_exporter would drop it", key, prev, f.file)
				}
				series[key] = f.file
				lines = append(lines, key)
			}
		}
	}
	slices.Sort(lines)
	fmt.Fprintln(ts.Stdout(), strings.Join(lines, "\n"))
}
