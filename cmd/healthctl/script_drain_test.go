// Script commands and conditions for the drain-test scripts
// (testdata/script/drain_*.txtar):
//
//	$DRAINSVC [-addr A] [-traffic-addr A] [-mode M] [-events F] [-pidfile F]
//	          [-slow D] [-flip-after D] [-cut-after D] [-hold-headers] [-hits F]
//	          [-cert F -key F]
//	    the Go drain fixture (stackfix.DrainService): this test binary
//	    re-executed as "drainsvc", a real process that receives real signals.
//	$DRAINPY
//	    the Python 3 fixture testdata/drain/drainsvc.py (stdlib only).
//	$DRAINJS
//	    the Node fixture testdata/drain/drainsvc.js (no packages).
//	freeport NAME
//	    picks a loopback port nothing listens on now, below the ephemeral
//	    range (no outgoing connection of the suite takes it as its source
//	    port before the script binds it: fixture.UnusedPort); sets $NAME_URL,
//	    $NAME_HOSTPORT, $NAME_PORT.
//	drainsvc NAME ARGS...
//	    starts $DRAINSVC ARGS... in the background (the test is its parent and
//	    reaps it), waits until it wrote its -pidfile, sets $NAME_PID; killed
//	    when the script ends.
//	gone PIDFILE
//	    fails unless the process whose pid PIDFILE holds is gone (waits 5s at
//	    most; a zombie counts as gone) — no fixture is left behind.
//	drainpki
//	    writes a server certificate and key for 127.0.0.1 issued by the
//	    script's private CA; sets $DRAIN_CA (for --cacert), $DRAIN_CERT
//	    and $DRAIN_KEY (for $DRAINSVC -cert / -key).
//	nolistener HOSTPORT
//	    fails when a connection to HOSTPORT succeeds now (one attempt, no
//	    waiting): run right after healthctl exits, it proves that nothing
//	    it started still listens.
//	drainclose EVENTS JSON TOLERANCE
//	    compares drain-test's JSON timeline (ready_flip, listener_closed) with
//	    the times the fixture recorded itself in EVENTS (flip, close, ms since
//	    it received the signal); fails when one differs by more than
//	    TOLERANCE plus the lateness drain-test measured of itself (its JSON
//	    "lateness"), or when the flip does not come before the close in both.
//
// Conditions: [python3] holds when python3 is installed.
package main

import (
	"bufio"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/drain/judge"
	"github.com/healthctl/healthctl/internal/drain/service"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
)

func init() {
	// The test binary re-executed through the drainsvc link is the fixture.
	if filepath.Base(os.Args[0]) == "drainsvc" {
		os.Exit(stackfix.DrainService(os.Args[1:]))
	}
	extraCmds["freeport"] = cmdFreePort
	extraCmds["drainsvc"] = cmdDrainSvc
	extraCmds["gone"] = cmdGone
	extraCmds["drainclose"] = cmdDrainClose
	extraCmds["nolistener"] = cmdNoListener
	extraCmds["drainpki"] = cmdDrainPKI
	extraConds["python3"] = func() (bool, error) {
		_, err := exec.LookPath("python3")
		return err == nil, nil
	}
	extraSetup = append(extraSetup, func(env *testscript.Env) error {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		dir := filepath.Join(env.WorkDir, ".drainbin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		link := filepath.Join(dir, "drainsvc")
		if err := os.Symlink(exe, link); err != nil {
			return err
		}
		env.Setenv("DRAINSVC", link)
		py, err := filepath.Abs(filepath.Join("..", "..", "testdata", "drain", "drainsvc.py"))
		if err != nil {
			return err
		}
		env.Setenv("DRAINPY", py)
		js, err := filepath.Abs(filepath.Join("..", "..", "testdata", "drain", "drainsvc.js"))
		if err != nil {
			return err
		}
		env.Setenv("DRAINJS", js)
		if strings.HasPrefix(filepath.Base(env.WorkDir), "script-drain_") {
			// A race-enabled fixture sleeps 1s at exit by default, which
			// would make every Go fixture look slow to exit.
			env.Setenv("GORACE", strings.TrimSpace(env.Getenv("GORACE")+" atexit_sleep_ms=0"))
			// Wide enough that a verdict's detail stays on one table row
			// (drain_width tests the wrapping).
			env.Setenv("COLUMNS", "200")
		}
		return nil
	})
}

// cmdFreePort implements freeport NAME.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "freeport")
	if len(args) != 1 {
		ts.Fatalf("usage: freeport NAME")
	}
	port, err := fixture.UnusedPort()
	ts.Check(err)
	hostport := net.JoinHostPort(fixture.Loopback4, strconv.Itoa(port))
	setAddrVars(ts, args[0], "http://"+hostport, hostport, port)
}

// cmdDrainSvc implements drainsvc NAME ARGS...
func cmdDrainSvc(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "drainsvc")
	if len(args) < 1 {
		ts.Fatalf("usage: drainsvc NAME ARGS...")
	}
	pidfile := ts.MkAbs(args[0] + ".pid")
	cmd := exec.Command(ts.Getenv("DRAINSVC"), append(args[1:], "-pidfile", pidfile)...)
	cmd.Env = append(scriptEnv(ts), "GORACE="+ts.Getenv("GORACE"))
	cmd.Dir = ts.MkAbs(".")
	ts.Check(cmd.Start())
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	ts.Defer(func() {
		cmd.Process.Kill()
		<-done
	})
	if !fixture.WaitFor(10*time.Second, func() bool { _, err := os.Stat(pidfile); return err == nil }) {
		ts.Fatalf("drainsvc: no pidfile within 10s")
	}
	ts.Setenv(args[0]+"_PID", strconv.Itoa(cmd.Process.Pid))
}

// cmdGone implements gone PIDFILE.
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "gone")
	if len(args) != 1 {
		ts.Fatalf("usage: gone PIDFILE")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		ts.Fatalf("gone: %s: bad pid %q", args[0], b)
	}
	if !fixture.WaitFor(5*time.Second, func() bool { return !service.Alive(pid) }) {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
		ts.Fatalf("gone: pid %d (%s) is still running: a fixture was left behind", pid, args[0])
	}
}

// cmdNoListener implements nolistener HOSTPORT.
func cmdNoListener(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "nolistener")
	if len(args) != 1 {
		ts.Fatalf("usage: nolistener HOSTPORT")
	}
	c, err := net.DialTimeout("tcp", args[0], time.Second)
	if err == nil {
		c.Close()
		ts.Fatalf("nolistener: %s still accepts connections: something was left running", args[0])
	}
}

// cmdDrainPKI implements drainpki.
func cmdDrainPKI(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "drainpki")
	if len(args) != 0 {
		ts.Fatalf("usage: drainpki")
	}
	p := state(ts).PKI(ts)
	cert, err := p.ServerCertificate(pkifix.CertGood)
	ts.Check(err)
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	ts.Check(err)
	certFile, keyFile := filepath.Join(p.Dir, "drain-server.pem"), filepath.Join(p.Dir, "drain-server-key.pem")
	ts.Check(os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644))
	ts.Check(os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600))
	ts.Setenv("DRAIN_CA", p.CAFile)
	ts.Setenv("DRAIN_CERT", certFile)
	ts.Setenv("DRAIN_KEY", keyFile)
}

// cmdDrainClose implements drainclose EVENTS JSON TOLERANCE.
func cmdDrainClose(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "drainclose")
	const usage = "usage: drainclose EVENTS JSON TOLERANCE"
	if len(args) != 3 {
		ts.Fatalf(usage)
	}
	tol, err := time.ParseDuration(args[2])
	if err != nil {
		ts.Fatalf("%s: %v", usage, err)
	}
	own := map[string]float64{}
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var name string
		var t float64
		if _, err := fmt.Sscanf(sc.Text(), "%s %g", &name, &t); err == nil {
			if _, seen := own[name]; !seen {
				own[name] = t
			}
		}
	}
	f.Close()
	data, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	var j struct {
		Timeline []judge.Event `json:"timeline"`
		// Lateness is drain-test's own measured scheduling lateness: a
		// poll that ran that late saw the change that much later.
		Lateness struct {
			MaxMS float64 `json:"max_ms"`
		} `json:"lateness"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		ts.Fatalf("drainclose: %s: %v", args[1], err)
	}
	if late := time.Duration(j.Lateness.MaxMS * float64(time.Millisecond)); late > 0 {
		ts.Logf("drainclose: drain-test ran up to %v late: tolerance %v + %v", late.Round(time.Millisecond), tol, late.Round(time.Millisecond))
		tol += late
	}
	seen := map[string]float64{}
	for _, e := range j.Timeline {
		if _, ok := seen[e.Event]; !ok {
			seen[e.Event] = e.TMS
		}
	}
	for _, pair := range [][2]string{{"flip", "ready_flip"}, {"close", "listener_closed"}} {
		o, ok1 := own[pair[0]]
		m, ok2 := seen[pair[1]]
		if !ok1 || !ok2 {
			ts.Fatalf("drainclose: fixture %s=%v (%v), drain-test %s=%v (%v)", pair[0], o, ok1, pair[1], m, ok2)
		}
		ts.Logf("drainclose: %s: fixture %.1f ms, drain-test %.1f ms", pair[0], o, m)
		if math.Abs(m-o) > float64(tol.Milliseconds()) {
			ts.Fatalf("drainclose: %s at %.1f ms by the fixture's clock, %s at %.1f ms by drain-test's: more than %v apart", pair[0], o, pair[1], m, tol)
		}
	}
	if !(own["flip"] < own["close"] && seen["ready_flip"] < seen["listener_closed"]) {
		ts.Fatalf("drainclose: flip must come before close (fixture %v, drain-test %v)", own, seen)
	}
}
