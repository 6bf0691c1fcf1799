// The end-to-end suite: testdata/script/*.txtar run by testscript against the
// real binary (this test binary, re-executed as "healthctl") and real
// loopback fixtures from internal/fixture.
//
// Run one script:    go test ./cmd/healthctl -run 'TestScripts/^probe_conn_refused$'
// Update golden text: UPDATE_SCRIPTS=1 go test ./cmd/healthctl -run TestScripts
//
// Every script gets:
//
//	HEALTHCTL_DNS_SERVER, DNS_ADDR  127.0.0.1:PORT of one DNS fixture shared by the
//	                                whole test (see dnsfix.DNSServer for its names),
//	                                so no script can reach the machine's resolver
//	HOME, XDG_CONFIG_HOME           $WORK and $WORK/.config
//	GORACE=halt_on_error=1          a data race in healthctl (built with -race)
//	                                fails its script
//	HCTEST_REASONS_FILE             where each healthctl run appends the reasons
//	                                it printed; after all scripts, TestScripts
//	                                fails for a reason no run printed (see
//	                                checkReasonCoverage)
//	no NO_COLOR, no proxy variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY
//	                                and lower-case forms are set empty)
//
// Conditions: [netns] holds when `unshare -rn` works and `ip` is installed
// (the host_unreachable / net_unreachable scripts need a network namespace);
// [race] when this test binary, which the scripts run as healthctl, was
// built with -race (script_body_test.go).
//
// Custom commands (each fixture is closed when its script ends):
//
//	httpd NAME [-status N] [-body S] [-header 'K: V']... [-retry-after S] [-redirect URL]
//	      [-mode hang|trickle|reset|garbage|empty]
//	      [-tls good|expired|notyet|wrongname|selfsigned|sha1|clientcert|stall|eof]
//	      [-switch-after D] [-listen-after D] [-count-file F] [-trickle-interval D] [-6]
//	      [-record FILE] [-size N] [-gzip]
//	    starts an HTTP(S) fixture and sets $NAME_URL (http://127.0.0.1:PORT or
//	    https://…), $NAME_HOSTPORT, $NAME_PORT, and with -count-file $NAME_COUNT
//	    (the file gets "total N", "before N", "after N" lines, rewritten on every
//	    request). With -tls also $NAME_CA (for --cacert), $NAME_CERT and $NAME_KEY
//	    (a client certificate for --cert/--key); all TLS fixtures of a script share
//	    one CA. -switch-after D answers -status (default 503) until D has passed,
//	    then 200; -listen-after D refuses connections until D has passed, then
//	    listens on the same port. -record FILE records every request into FILE
//	    (a "METHOD TARGET" line, "Host: h", the headers sorted, an empty line;
//	    rewritten atomically per request); -size N serves a body of N bytes
//	    (filler, then -body as the last bytes); -gzip sends the body gzip-compressed
//	    (Content-Encoding: gzip) to a request whose Accept-Encoding names gzip.
//	closedport NAME
//	    reserves a port where nothing listens (connections are refused); sets
//	    $NAME_URL, $NAME_HOSTPORT, $NAME_PORT.
//	backlog NAME
//	    a listener that never accepts, its accept queue full: connects time out;
//	    sets $NAME_URL, $NAME_HOSTPORT, $NAME_PORT.
//	statsd NAME
//	    a StatsD UDP listener; sets $NAME_ADDR (127.0.0.1:PORT), $NAME_PORT and
//	    $NAME_FILE (every line received is appended to that file).
//	waitfile [-timeout D] FILE REGEXP
//	    waits (default 10s) until FILE exists and its content matches REGEXP;
//	    the way to wait for a background process instead of sleeping.
//	exitcode N CMD [ARGS...]
//	    runs CMD like exec (its stdout and stderr are what the stdout/stderr
//	    commands then check) and fails unless it exits with exactly N;
//	    testscript's own `! exec` only says "non-zero".
//
// Other test files add commands, conditions and setup without editing this
// file: fill extraCmds, extraConds or extraSetup in an init function, e.g.
//
//	func init() { extraCmds["drainsvc"] = cmdDrainSvc }
//
// A name already taken is a test failure. Keep per-script state in
// ts.Value(scriptStateKey{}) or in closures, never in package variables:
// scripts run in parallel.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
	"github.com/healthctl/healthctl/internal/fixture/peers"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// extraCmds are custom script commands registered by other test files.
var extraCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){}

// extraConds are script conditions registered by other test files; the key
// is the condition's name as written in [name].
var extraConds = map[string]func() (bool, error){}

// extraSetup runs for every script after the common setup.
var extraSetup []func(env *testscript.Env) error

func TestMain(m *testing.M) {
	defaultParallel()
	testscript.Main(m, map[string]func(){
		"healthctl": func() { os.Exit(mainRecordingReasons(nil)) },
		// healthctl-prober-panics is healthctl whose every probe panics on
		// the goroutine that runs it (probe's per-URL goroutines,
		// wait-healthy's per-target loops, watch's sweep, drain-test's
		// health polls: each takes the factory's prober): the panic must
		// become exit 70 and one line, not Go's exit 2 and a stack trace.
		"healthctl-prober-panics": func() {
			os.Exit(mainRecordingReasons(func(a *cli.Factory) {
				a.Prober = func(context.Context, *scheme.Options) probe.Result { panic("injected: the prober panicked") }
			}))
		},
	})
}

// defaultParallel runs four tests at a time unless -parallel says
// otherwise: most scripts wait on servers, not on the CPU, so plain
// `go test ./...` on two cores takes about half the time it would at
// GOMAXPROCS. It does nothing when this binary runs as a script's
// healthctl (testscript.Main's commands), whose arguments are not a test's.
func defaultParallel() {
	if !strings.HasSuffix(strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe"), ".test") {
		return
	}
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "4")
	}
}

// scriptStateKey is the Env.Values key of a script's *scriptState.
type scriptStateKey struct{}

// scriptState is what one script's fixtures share.
type scriptState struct {
	mu  sync.Mutex
	pki *pkifix.PKI
	// gated: the script asked for a stack (require, or a command that
	// starts a real server), which needsStack must see.
	gated atomic.Bool
}

// markGated records that ts's script asked for a stack.
func markGated(ts *testscript.TestScript) {
	if st, ok := ts.Value(scriptStateKey{}).(*scriptState); ok {
		st.gated.Store(true)
	}
}

// PKI returns the script's CA, created on first use in $WORK/.pki.
func (s *scriptState) PKI(ts *testscript.TestScript) *pkifix.PKI {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pki == nil {
		p, err := pkifix.NewPKI(filepath.Join(ts.Getenv("WORK"), ".pki"))
		ts.Check(err)
		s.pki = p
	}
	return s.pki
}

func state(ts *testscript.TestScript) *scriptState {
	return ts.Value(scriptStateKey{}).(*scriptState)
}

// proxyVars are cleared for every script so the host's proxy settings cannot
// send a probe anywhere but loopback.
// alone serialises the scripts whose verdicts rest on a real service's
// timing (drain_truth_*: a Node or Python service must answer within its
// pre-drain window for a correct drain to be one): each runs with no other
// script of this package beside it, the rest run in parallel as before. On
// CI's two cores under -race, a Node service beside them answered 300 ms
// late and reset connections made inside its window, which drain-test and
// the truth client both saw (a real failure of a starved service, not of
// the judge).
var alone sync.RWMutex

// besideScripts makes a long Go test of this package (a real stack, the
// Action's shell, the curl differential) run in parallel with the scripts
// and the other long tests instead of before them, one at a time (they
// took ~210 s of the race suite's ~600 s in turn, mostly waiting), and
// keeps it off the drain_truth scripts, which still run alone: it holds
// alone's read lock as the other scripts do.
func besideScripts(t *testing.T) {
	t.Parallel()
	alone.RLock()
	t.Cleanup(alone.RUnlock)
}

// runsAlone reports whether the script runs with no other beside it.
func runsAlone(name string) bool { return strings.HasPrefix(name, "drain_truth_") }

var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"}

func TestScripts(t *testing.T) {
	dns, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"httpd":      cmdHTTPD,
		"closedport": cmdClosedPort,
		"backlog":    cmdBacklog,
		"statsd":     cmdStatsD,
		"waitfile":   cmdWaitFile,
		"exitcode":   cmdExitCode,
	}
	for name, f := range extraCmds {
		if _, dup := cmds[name]; dup {
			t.Fatalf("script command %q registered twice", name)
		}
		cmds[name] = f
	}
	conds := map[string]func() (bool, error){"netns": netnsAvailable}
	for name, f := range extraConds {
		if _, dup := conds[name]; dup {
			t.Fatalf("script condition %q registered twice", name)
		}
		conds[name] = f
	}
	// Every healthctl run appends the reasons it printed here; once all
	// scripts have finished, checkReasonCoverage reads them.
	reasonsFile := filepath.Join(t.TempDir(), "reasons")
	scripts, err := filepath.Glob(filepath.Join("..", "..", "testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var scriptsRun atomic.Int32
	t.Cleanup(func() { checkReasonCoverage(t, reasonsFile, int(scriptsRun.Load()), len(scripts), conds) })
	t.Cleanup(func() {
		unseenStacks.Range(func(k, _ any) bool {
			t.Errorf("script %s starts a real stack but names none with `require` (HEALTHCTL_STACKS=only would never run it): add `require PROGRAM`", k)
			return true
		})
	})
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Cmds:                cmds,
		Condition: func(cond string) (bool, error) {
			if f, ok := conds[cond]; ok {
				return f()
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			if stackfix.StacksOnly() && !needsStack(strings.TrimPrefix(filepath.Base(env.WorkDir), "script-")) {
				env.T().Skip("skipped: needs no stack (" + stackfix.StacksEnv + "=only): go test ./... runs it")
			}
			if runsAlone(strings.TrimPrefix(filepath.Base(env.WorkDir), "script-")) {
				alone.Lock()
				env.Defer(alone.Unlock)
			} else {
				alone.RLock()
				env.Defer(alone.RUnlock)
			}
			vars := env.Vars[:0]
			for _, kv := range env.Vars {
				k, _, _ := strings.Cut(kv, "=")
				if k == "NO_COLOR" || k == "HOME" || k == "XDG_CONFIG_HOME" || k == "HEALTHCTL_DNS_SERVER" {
					continue
				}
				vars = append(vars, kv)
			}
			env.Vars = vars
			for _, k := range proxyVars {
				env.Setenv(k, "")
			}
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			env.Setenv("HEALTHCTL_DNS_SERVER", dns.Addr)
			env.Setenv("DNS_ADDR", dns.Addr)
			// A data race in healthctl fails the script, not just a log line.
			env.Setenv("GORACE", "halt_on_error=1")
			env.Setenv(reasonsFileVar, reasonsFile)
			scriptsRun.Add(1)
			st := &scriptState{}
			env.Values[scriptStateKey{}] = st
			// HEALTHCTL_STACKS=only runs the scripts needsStack sees: a
			// script that asks for a stack some other way would never run
			// against one.
			name := strings.TrimPrefix(filepath.Base(env.WorkDir), "script-")
			env.Defer(func() {
				if st.gated.Load() && !needsStack(name) {
					unseenStacks.Store(name, true)
				}
			})
			for _, f := range extraSetup {
				if err := f(env); err != nil {
					return err
				}
			}
			return nil
		},
	})
}

// unseenStacks are the scripts that asked for a stack that needsStack
// does not see.
var unseenStacks sync.Map

// stackLine is a script line that asks for a stack: `require`, or a
// command that starts a real server (those call requireProg; a command
// missing here fails TestScripts through unseenStacks).
var stackLine = regexp.MustCompile(`(?m)^\s*(\[[^\]]*\]\s*)*(require|pgd|pgbouncerd|redisd|mariadbd|rabbitmqd)\s`)

// needsStack says whether the script asks for a stack (stackLine).
func needsStack(name string) bool {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "script", name+".txtar"))
	if err != nil {
		return true // run it: its own error says what is wrong
	}
	script, _, _ := strings.Cut(string(b), "\n-- ")
	return stackLine.MatchString(script)
}

// cleaner registers fixture cleanups with the script.
func cleaner(ts *testscript.TestScript) fixture.Cleaner { return fixture.DeferFunc(ts.Defer) }

func noNeg(ts *testscript.TestScript, neg bool, name string) {
	if neg {
		ts.Fatalf("%s does not support !", name)
	}
}

// headerFlags collects repeated -header 'K: V' flags.
type headerFlags http.Header

func (h headerFlags) String() string { return "" }
func (h headerFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("header %q: want 'Name: value'", s)
	}
	http.Header(h).Add(strings.TrimSpace(k), strings.TrimSpace(v))
	return nil
}

const httpdUsage = "usage: httpd NAME [-status N] [-body S] [-header 'K: V']... [-retry-after S] [-redirect URL] " +
	"[-mode hang|trickle|reset|garbage|empty] [-tls good|expired|notyet|wrongname|selfsigned|sha1|clientcert|stall|eof] " +
	"[-switch-after D] [-listen-after D] [-count-file F] [-trickle-interval D] [-6] [-record FILE] [-size N] [-gzip]"

// cmdHTTPD implements httpd (see the file comment).
func cmdHTTPD(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "httpd")
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf("%s", httpdUsage)
	}
	name := args[0]
	var (
		opts      fixture.HTTPOptions
		header    = headerFlags{}
		mode, tls string
		countFile string
		record    string
	)
	fs := flag.NewFlagSet("httpd", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	fs.IntVar(&opts.Status, "status", 0, "")
	fs.StringVar(&opts.Body, "body", "", "")
	fs.Var(header, "header", "")
	fs.StringVar(&opts.RetryAfter, "retry-after", "", "")
	fs.BoolVar(&opts.Gzip, "gzip", false, "")
	fs.StringVar(&opts.Redirect, "redirect", "", "")
	fs.StringVar(&mode, "mode", "", "")
	fs.StringVar(&tls, "tls", "", "")
	fs.DurationVar(&opts.SwitchAfter, "switch-after", 0, "")
	fs.DurationVar(&opts.ListenAfter, "listen-after", 0, "")
	fs.StringVar(&countFile, "count-file", "", "")
	fs.DurationVar(&opts.TrickleInterval, "trickle-interval", 0, "")
	fs.BoolVar(&opts.IPv6, "6", false, "")
	fs.StringVar(&record, "record", "", "")
	fs.Int64Var(&opts.BodySize, "size", 0, "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		ts.Fatalf("httpd: %v\n%s", err, httpdUsage)
	}
	if record != "" {
		opts.RecordFile = ts.MkAbs(record)
	}
	opts.Header = http.Header(header)
	opts.Mode = fixture.Mode(mode)
	opts.TLS = fixture.TLSMode(tls)
	if opts.TLS != fixture.TLSNone {
		opts.PKI = state(ts).PKI(ts)
	}
	if countFile != "" {
		opts.CountFile = ts.MkAbs(countFile)
	}
	s, err := fixture.NewHTTPServer(cleaner(ts), opts)
	if err != nil {
		ts.Fatalf("httpd %s: %v", name, err)
	}
	ts.Setenv(name+"_URL", s.URL)
	ts.Setenv(name+"_HOSTPORT", s.Addr)
	ts.Setenv(name+"_PORT", strconv.Itoa(s.Port))
	if countFile != "" {
		ts.Setenv(name+"_COUNT", opts.CountFile)
	}
	if opts.PKI != nil {
		ts.Setenv(name+"_CA", opts.PKI.CAFile)
		ts.Setenv(name+"_CERT", opts.PKI.ClientCertFile)
		ts.Setenv(name+"_KEY", opts.PKI.ClientKeyFile)
	}
}

func setAddrVars(ts *testscript.TestScript, name, url, hostport string, port int) {
	ts.Setenv(name+"_URL", url)
	ts.Setenv(name+"_HOSTPORT", hostport)
	ts.Setenv(name+"_PORT", strconv.Itoa(port))
}

// cmdClosedPort implements closedport NAME.
func cmdClosedPort(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "closedport")
	if len(args) != 1 {
		ts.Fatalf("usage: closedport NAME")
	}
	p, err := fixture.NewClosedPort(cleaner(ts))
	ts.Check(err)
	setAddrVars(ts, args[0], p.URL(), p.Addr, p.Port)
}

// cmdBacklog implements backlog NAME.
func cmdBacklog(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "backlog")
	if len(args) != 1 {
		ts.Fatalf("usage: backlog NAME")
	}
	b, err := fixture.NewBacklog(cleaner(ts))
	ts.Check(err)
	setAddrVars(ts, args[0], b.URL(), b.Addr, b.Port)
}

// cmdStatsD implements statsd NAME.
func cmdStatsD(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "statsd")
	if len(args) != 1 {
		ts.Fatalf("usage: statsd NAME")
	}
	file := ts.MkAbs(args[0] + ".statsd")
	s, err := peers.NewStatsD(cleaner(ts), file)
	ts.Check(err)
	ts.Setenv(args[0]+"_ADDR", s.Addr)
	_, port, _ := strings.Cut(s.Addr, ":")
	ts.Setenv(args[0]+"_PORT", port)
	ts.Setenv(args[0]+"_FILE", file)
}

// cmdWaitFile implements waitfile [-timeout D] FILE REGEXP.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "waitfile")
	const usage = "usage: waitfile [-timeout D] FILE REGEXP"
	timeout := 10 * time.Second
	if len(args) > 0 && args[0] == "-timeout" {
		if len(args) < 2 {
			ts.Fatalf(usage)
		}
		d, err := time.ParseDuration(args[1])
		if err != nil {
			ts.Fatalf("%s: %v", usage, err)
		}
		timeout, args = d, args[2:]
	}
	if len(args) != 2 {
		ts.Fatalf(usage)
	}
	re, err := regexp.Compile(args[1])
	if err != nil {
		ts.Fatalf("waitfile: %v", err)
	}
	file := ts.MkAbs(args[0])
	var last []byte
	if !fixture.WaitFor(timeout, func() bool {
		last, err = os.ReadFile(file)
		return err == nil && re.Match(last)
	}) {
		ts.Fatalf("waitfile: %s did not match %q within %v (last content %q, err %v)", args[0], args[1], timeout, last, err)
	}
}

// cmdExitCode implements exitcode N CMD [ARGS...]. It runs the command
// through ts.Exec, which records its stdout and stderr exactly as exec does,
// so stdout/stderr assertions that follow see them.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "exitcode")
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N CMD [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("usage: exitcode N CMD [ARGS...]: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: running %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

var netns struct {
	once sync.Once
	ok   bool
}

// netnsAvailable reports whether this user may create a network namespace
// and configure it (unshare -rn and ip).
func netnsAvailable() (bool, error) {
	netns.once.Do(func() {
		if _, err := exec.LookPath("unshare"); err != nil {
			return
		}
		if _, err := exec.LookPath("ip"); err != nil {
			return
		}
		netns.ok = exec.Command("unshare", "-rn", "ip", "link", "set", "lo", "up").Run() == nil
	})
	return netns.ok, nil
}
