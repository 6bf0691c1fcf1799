package main

// The real Redis and PostgreSQL servers of the redis:// and postgres://
// scripts (testdata/script/*redis*, *postgres*): Debian's redis-server and
// postgresql (.ci/deps/kinds.sh), each on a free loopback port with its data
// under a directory of its own, killed when the script ends.
//
//	redisd NAME [-loading|-tls|-sentinel] [REDIS-SERVER-OPTION...]
//	    starts redis-server (no persistence, bound to 127.0.0.1) with the
//	    options given (--requirepass PW, --replicaof …); sets $NAME_URL
//	    (redis://127.0.0.1:PORT), $NAME_HOSTPORT, $NAME_PORT. -tls serves
//	    TLS only (the script's CA's certificate for 127.0.0.1, $NAME_CA;
//	    $NAME_URL is rediss://). -loading first
//	    writes a dump of 2000 keys and starts the server loading it with a
//	    delay per key (key-load-delay): it answers -LOADING for seconds.
//	    -sentinel starts it as a Sentinel (redis-server CONF --sentinel,
//	    the configuration written beside its data) watching no master.
//	pgd NAME [-starting] [-standby] [-tls] [-c NAME=VALUE]... [-hba LINE]...
//	    initdb's a cluster (local connections trust, TCP scram-sha-256 with
//	    the password "pgsecret1"; -hba: pg_hba.conf's lines instead) and starts postgres on 127.0.0.1, logging
//	    to $WORK/NAME.postgres.log (log_connections on); sets $NAME_URL
//	    (postgres://127.0.0.1:PORT), $NAME_HOSTPORT, $NAME_PORT, $NAME_HOST
//	    (its socket directory, for psql -h) and $NAME_DATA. -starting keeps
//	    it starting up (archive recovery whose restore_command waits for
//	    the path $NAME_GO to exist: mkdir it); -standby makes it a standby
//	    with nothing to follow and hot_standby off; -tls turns ssl on with
//	    the script's CA's certificate for 127.0.0.1 ($NAME_CA). As root the server runs
//	    as the postgres user (initdb refuses root).
//	pgstop NAME smart|fast
//	    asks the postmaster to shut down (SIGTERM, SIGINT), without waiting.
//	pgbouncerd NAME PG
//	    starts Debian's pgbouncer on 127.0.0.1 in front of pgd PG's server
//	    (every database name to it, session pooling), its clients
//	    authenticated by SCRAM with the postgres role's password (its
//	    auth_file) and its server logins the same; logs to
//	    $WORK/NAME.pgbouncer.log; sets $NAME_URL (postgres://127.0.0.1:PORT),
//	    $NAME_HOSTPORT, $NAME_PORT. As root it runs as the postgres user
//	    (pgbouncer refuses root).
//	pgerr NAME SQLSTATE MESSAGE
//	    a loopback server that answers every startup message with an
//	    ErrorResponse (FATAL, SQLSTATE, MESSAGE), as a pooler in front of a
//	    database does; sets $NAME_URL and $NAME_PORT.

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
)

func init() {
	extraCmds["redisd"] = cmdRedisd
	extraCmds["pgd"] = cmdPgd
	extraCmds["pgstop"] = cmdPgStop
	extraCmds["pgerr"] = cmdPgErr
	extraCmds["pgbouncerd"] = cmdPgBouncerd
}

// kindsDeps installs the servers.
const kindsDeps = ".ci/deps/kinds.sh"

// fixtureEnv is what the servers' starters need of a script or a test:
// failing, cleaning up, skipping.
type fixtureEnv struct {
	fatalf  func(format string, args ...any)
	cleanup func(func())
	skip    func(why string)
	// gated records that a stack was asked for (nil: a Go test's).
	gated func()
}

func (e fixtureEnv) check(err error) {
	if err != nil {
		e.fatalf("%v", err)
	}
}

func scriptFixtureEnv(ts *testscript.TestScript) fixtureEnv {
	return fixtureEnv{fatalf: ts.Fatalf, cleanup: ts.Defer, skip: func(why string) { ts.Value(scriptTKey{}).(testscript.T).Skip(why) },
		gated: func() { markGated(ts) }}
}

func testFixtureEnv(t *testing.T) fixtureEnv {
	return fixtureEnv{fatalf: t.Fatalf, cleanup: t.Cleanup, skip: func(why string) { t.Skip(why) }}
}

// startServer starts cmd in a process group of its own, killed (SIGQUIT,
// then SIGKILL after 5s) when the script ends, and waits until port
// accepts connections.
func startServer(e fixtureEnv, what string, cmd *exec.Cmd, port int, logPath string) {
	logf, err := os.Create(logPath)
	e.check(err)
	cmd.Stdout, cmd.Stderr = logf, logf
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	e.check(cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	e.cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if !stackfix.Listening(addr, exited, 20*time.Second) {
		b, _ := os.ReadFile(logPath)
		e.fatalf("%s did not listen on %s within 20s: %s", what, addr, b)
	}
}

func requireProg(e fixtureEnv, prog string) string {
	if e.gated != nil {
		e.gated()
	}
	if why, fail := stackfix.Gate(prog, stacksDir); why != "" {
		if fail {
			e.fatalf("%s, and CI=%s (%s installs it)", why, os.Getenv("CI"), kindsDeps)
		}
		e.skip("skipped: " + why)
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		e.fatalf("%s: %v", prog, err)
	}
	return path
}

// cmdRedisd implements redisd NAME [-loading] [OPTION...].
func cmdRedisd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "redisd")
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf("usage: redisd NAME [-loading] [REDIS-SERVER-OPTION...]")
	}
	name, opts := args[0], args[1:]
	loading := len(opts) > 0 && opts[0] == "-loading"
	secure := len(opts) > 0 && opts[0] == "-tls"
	sentinel := len(opts) > 0 && opts[0] == "-sentinel"
	if loading || secure || sentinel {
		opts = opts[1:]
	}
	e := scriptFixtureEnv(ts)
	server := requireProg(e, "redis-server")
	dir := ts.MkAbs(name + ".redis")
	ts.Check(os.MkdirAll(dir, 0o755))
	port, err := fixture.UnusedPort()
	ts.Check(err)
	base := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no"}
	if loading {
		// A dump of 2000 keys, written by a server of its own.
		cli := requireProg(e, "redis-cli")
		setup := exec.Command(server, append(base, "--enable-debug-command", "yes")...)
		startServer(e, "redis-server (writing the dump)", setup, port, filepath.Join(dir, "setup.log"))
		for _, c := range [][]string{{"debug", "populate", "2000", "key", "10"}, {"save"}} {
			out, err := exec.Command(cli, append([]string{"-p", strconv.Itoa(port)}, c...)...).CombinedOutput()
			if err != nil || strings.Contains(string(out), "ERR") {
				ts.Fatalf("redis-cli %v: %v %s", c, err, out)
			}
		}
		exec.Command(cli, "-p", strconv.Itoa(port), "shutdown", "nosave").Run()
		if !fixture.WaitFor(10*time.Second, func() bool {
			c, err := net.DialTimeout("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 100*time.Millisecond)
			if err == nil {
				c.Close()
			}
			return err != nil
		}) {
			ts.Fatalf("redis-server (writing the dump) did not stop")
		}
		// 2000 keys at 2 ms each: seconds of -LOADING, answered between
		// every kilobyte loaded.
		base = append(base, "--key-load-delay", "2000", "--loading-process-events-interval-bytes", "1024")
	}
	scheme := "redis"
	if secure {
		p := state(ts).PKI(ts)
		cert, err := p.ServerCertificate(pkifix.CertGood)
		ts.Check(err)
		certFile, keyFile, err := p.WriteServerFiles("redis-"+name, cert)
		ts.Check(err)
		base[1] = "0"
		base = append(base, "--tls-port", strconv.Itoa(port), "--tls-cert-file", certFile, "--tls-key-file", keyFile,
			"--tls-ca-cert-file", p.CAFile, "--tls-auth-clients", "no")
		scheme = "rediss"
		ts.Setenv(name+"_CA", p.CAFile)
	}
	if sentinel {
		// A Sentinel needs a configuration file it can rewrite; it
		// takes no --save or --appendonly.
		conf := filepath.Join(dir, "sentinel.conf")
		ts.Check(os.WriteFile(conf, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\n", port, dir)), 0o644))
		base = []string{conf, "--sentinel", "--daemonize", "no"}
	}
	for _, o := range opts {
		if o == "--cluster-enabled" {
			// The cluster bus listens on the port + 10000 unless told:
			// a port of its own, never one another test holds (the
			// server exits, and the probe saw conn_reset).
			bus, err := fixture.UnusedPort()
			ts.Check(err)
			base = append(base, "--cluster-port", strconv.Itoa(bus))
			break
		}
	}
	cmd := exec.Command(server, append(base, opts...)...)
	startServer(e, "redis-server", cmd, port, filepath.Join(dir, "redis.log"))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	setAddrVars(ts, name, scheme+"://"+addr, addr, port)
}

// pgBin is the directory of Debian's PostgreSQL server programs (the
// newest installed), "" when none is.
func pgBin() string {
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(m) == 0 {
		return ""
	}
	return filepath.Dir(m[len(m)-1])
}

// pgPassword is the password of the postgres role in every pgd cluster.
const pgPassword = "pgsecret1"

// asPostgres runs cmd as the postgres user when this process is root
// (initdb and postgres refuse root); chown gives it the paths.
func asPostgres(e fixtureEnv, cmd *exec.Cmd, paths ...string) {
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		u, err = user.Lookup("nobody")
	}
	e.check(err)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, p := range paths {
		e.check(filepath.Walk(p, func(path string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(path, uid, gid)
		}))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(paths[0]))
}

// cmdPgd implements pgd NAME [-starting] [-standby] [-c NAME=VALUE]...
func cmdPgd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "pgd")
	const usage = "usage: pgd NAME [-starting] [-standby] [-tls] [-c NAME=VALUE]... [-hba LINE]..."
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf(usage)
	}
	name := args[0]
	fs := flag.NewFlagSet("pgd", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	var o pgOptions
	fs.BoolVar(&o.starting, "starting", false, "")
	fs.BoolVar(&o.standby, "standby", false, "")
	secure := fs.Bool("tls", false, "")
	fs.Func("c", "", func(s string) error { o.settings = append(o.settings, s); return nil })
	fs.Func("hba", "", func(s string) error { o.hba = append(o.hba, s); return nil })
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		ts.Fatalf(usage)
	}
	o.log = ts.MkAbs(name + ".postgres.log")
	if *secure {
		p := state(ts).PKI(ts)
		cert, err := p.ServerCertificate(pkifix.CertGood)
		ts.Check(err)
		o.certFile, o.keyFile, err = p.WriteServerFiles("postgres-"+name, cert)
		ts.Check(err)
		ts.Setenv(name+"_CA", p.CAFile)
	}
	pg := startPG(scriptFixtureEnv(ts), o)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(pg.port))
	setAddrVars(ts, name, "postgres://"+addr, addr, pg.port)
	ts.Setenv(name+"_HOST", pg.root)
	ts.Setenv(name+"_DATA", pg.data)
	if o.starting {
		ts.Setenv(name+"_GO", pg.goFile)
	}
}

// pgOptions are pgd's: hold it starting up, make it a standby, settings,
// the server's log.
type pgOptions struct {
	starting, standby bool
	settings          []string
	// hba, when set, are pg_hba.conf's lines in place of initdb's.
	hba []string
	log string
	// certFile and keyFile, when set, turn TLS on (ssl=on).
	certFile, keyFile string
}

// pgServer is a cluster startPG started.
type pgServer struct {
	port               int
	root, data, goFile string
}

// startPG initdb's a cluster and starts its postgres (pgd).
func startPG(e fixtureEnv, o pgOptions) pgServer {
	bin := pgBin()
	if bin == "" {
		requireProg(e, "/usr/lib/postgresql/VERSION/bin/postgres")
	}
	requireProg(e, filepath.Join(bin, "postgres"))
	// Not under the script's or test's directory, which only root may
	// enter: the postgres user must reach its data directory and socket.
	root, err := os.MkdirTemp("", "healthctl-pgd-")
	e.check(err)
	e.cleanup(func() { os.RemoveAll(root) })
	e.check(os.Chmod(root, 0o755))
	pg := pgServer{root: root, data: filepath.Join(root, "data")}
	pwfile := filepath.Join(root, "pw")
	e.check(os.WriteFile(pwfile, []byte(pgPassword+"\n"), 0o600))
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", pg.data, "-U", "postgres", "--auth-local=trust",
		"--auth-host=scram-sha-256", "--pwfile", pwfile, "-E", "UTF8", "--no-sync", "--no-instructions")
	asPostgres(e, initdb, root)
	if out, err := initdb.CombinedOutput(); err != nil {
		e.fatalf("initdb: %v\n%s", err, out)
	}
	if len(o.hba) > 0 {
		hba := filepath.Join(pg.data, "pg_hba.conf")
		e.check(os.WriteFile(hba, []byte(strings.Join(o.hba, "\n")+"\n"), 0o600))
		// The server user's, as the rest of the data (asPostgres chowns).
		asPostgres(e, exec.Command("true"), hba)
	}
	pg.port, err = fixture.UnusedPort()
	e.check(err)
	argv := []string{"-D", pg.data, "-p", strconv.Itoa(pg.port), "-k", root, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "log_connections=on"}
	if o.starting {
		// Archive recovery asks restore_command for the timeline history
		// before the startup process tells the postmaster recovery
		// began: until goFile exists the server is starting up (57P03).
		pg.goFile = filepath.Join(root, "go")
		e.check(os.WriteFile(filepath.Join(pg.data, "recovery.signal"), nil, 0o644))
		argv = append(argv, "-c", fmt.Sprintf("restore_command=while [ ! -e %s ]; do sleep 0.05; done; false", pg.goFile))
	}
	if o.standby {
		e.check(os.WriteFile(filepath.Join(pg.data, "standby.signal"), nil, 0o644))
		argv = append(argv, "-c", "hot_standby=off", "-c", "restore_command=false")
	}
	if o.certFile != "" {
		// Copied beside the data: the key must be the server user's,
		// mode 0600, and the script's directory is root's alone.
		for _, f := range [][2]string{{o.certFile, "server.crt"}, {o.keyFile, "server.key"}} {
			b, err := os.ReadFile(f[0])
			e.check(err)
			e.check(os.WriteFile(filepath.Join(root, f[1]), b, 0o600))
		}
		argv = append(argv, "-c", "ssl=on", "-c", "ssl_cert_file="+filepath.Join(root, "server.crt"),
			"-c", "ssl_key_file="+filepath.Join(root, "server.key"))
	}
	for _, s := range o.settings {
		argv = append(argv, "-c", s)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), argv...)
	asPostgres(e, cmd, root)
	startServer(e, "postgres", cmd, pg.port, o.log)
	if !o.starting && !o.standby {
		// The postmaster listens before the startup process is done
		// (57P03 "starting up" meanwhile): ready is what its log says.
		if !fixture.WaitFor(30*time.Second, func() bool {
			b, _ := os.ReadFile(o.log)
			return strings.Contains(string(b), "database system is ready to accept connections")
		}) {
			b, _ := os.ReadFile(o.log)
			e.fatalf("postgres did not become ready within 30s: %s", b)
		}
	}
	return pg
}

// cmdPgStop implements pgstop NAME smart|fast.
func cmdPgStop(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "pgstop")
	sig := map[string]syscall.Signal{"smart": syscall.SIGTERM, "fast": syscall.SIGINT}
	if len(args) != 2 || sig[args[1]] == 0 {
		ts.Fatalf("usage: pgstop NAME smart|fast")
	}
	b, err := os.ReadFile(filepath.Join(ts.Getenv(args[0]+"_DATA"), "postmaster.pid"))
	ts.Check(err)
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	ts.Check(err)
	ts.Check(syscall.Kill(pid, sig[args[1]]))
}

// cmdPgErr implements pgerr NAME SQLSTATE MESSAGE.
func cmdPgErr(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "pgerr")
	if len(args) != 3 {
		ts.Fatalf("usage: pgerr NAME SQLSTATE MESSAGE")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	ts.Check(err)
	ts.Defer(func() { ln.Close() })
	fields := "SFATAL\x00VFATAL\x00C" + args[1] + "\x00M" + args[2] + "\x00\x00"
	msg := make([]byte, 5, 5+len(fields))
	msg[0] = 'E'
	binary.BigEndian.PutUint32(msg[1:], uint32(4+len(fields)))
	msg = append(msg, fields...)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				var n uint32
				if binary.Read(br, binary.BigEndian, &n) != nil || n < 8 || n > 10000 {
					return
				}
				if _, err := io.CopyN(io.Discard, br, int64(n-4)); err != nil {
					return
				}
				c.Write(msg)
			}()
		}
	}()
	addr := ln.Addr().String()
	setAddrVarsFrom(ts, args[0], "postgres", addr)
}

// cmdPgBouncerd implements pgbouncerd NAME PG.
func cmdPgBouncerd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "pgbouncerd")
	if len(args) != 2 {
		ts.Fatalf("usage: pgbouncerd NAME PG")
	}
	name, pgPort := args[0], ts.Getenv(args[1]+"_PORT")
	if pgPort == "" {
		ts.Fatalf("pgbouncerd: no pgd %s started", args[1])
	}
	e := scriptFixtureEnv(ts)
	bin := requireProg(e, "pgbouncer")
	// Not under the script's directory, which only root may enter.
	root, err := os.MkdirTemp("", "healthctl-pgbouncer-")
	ts.Check(err)
	ts.Defer(func() { os.RemoveAll(root) })
	ts.Check(os.Chmod(root, 0o755))
	port, err := fixture.UnusedPort()
	ts.Check(err)
	users := filepath.Join(root, "userlist.txt")
	ts.Check(os.WriteFile(users, []byte(fmt.Sprintf("%q %q\n", "postgres", pgPassword)), 0o600))
	ini := filepath.Join(root, "pgbouncer.ini")
	ts.Check(os.WriteFile(ini, []byte(fmt.Sprintf(`[databases]
* = host=127.0.0.1 port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = scram-sha-256
auth_file = %s
pool_mode = session
server_login_retry = 30
query_wait_timeout = 2
pidfile =
logfile =
`, pgPort, port, users)), 0o644))
	cmd := exec.Command(bin, ini)
	asPostgres(e, cmd, root)
	startServer(e, "pgbouncer", cmd, port, ts.MkAbs(name+".pgbouncer.log"))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	setAddrVars(ts, name, "postgres://"+addr, addr, port)
}
