package main

// The real RabbitMQ of the amqp:// scripts (testdata/script/*rabbitmq*):
// Debian's rabbitmq-server (.ci/deps/kinds.sh), a node of its own on
// loopback ports with its data, logs, configuration and Erlang cookie
// under a temporary directory, never the system service; and the oracle,
// an application's client (rabbitmq/amqp091-go, test code only).
//
//	rabbitmqd NAME [-tls] [-nowait]
//	    starts rabbitmq-server bound to 127.0.0.1 (AMQP port, distribution
//	    port and its own epmd on loopback ports), loading definitions: the
//	    vhosts "/" and "orders"; the users guest (password "guest",
//	    loopback only, on "/"), app ("apppw1", on "orders") and noaccess
//	    ("noaccesspw1", on no vhost). Sets $NAME_URL (amqp://127.0.0.1:PORT),
//	    $NAME_HOSTPORT, $NAME_PORT; the log is $WORK/NAME.rabbitmq.log.
//	    Waits until the log says "Server startup complete" (-nowait: does
//	    not wait; the port refuses connections while the node boots). -tls
//	    adds a TLS listener ($NAME_TLS_URL amqps://127.0.0.1:PORT,
//	    $NAME_TLS_HOSTPORT; the script's CA's certificate for 127.0.0.1:
//	    $NAME_CA).
//	rabbitmqstop NAME
//	    stops the node (SIGTERM) and waits until it has exited.
//	amqpclient URL
//	    connects with amqp091-go's DialConfig (10 s), as an application
//	    does: prints "connected" and exits 0, or prints the client's error
//	    and fails.

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
)

func init() {
	extraCmds["rabbitmqd"] = cmdRabbitmqd
	extraCmds["rabbitmqstop"] = cmdRabbitmqStop
	extraCmds["amqpclient"] = cmdAMQPClient
}

// rabbitmqBin is the node's own start script (the /usr/sbin wrapper
// switches to the rabbitmq user and drops the environment).
const rabbitmqBin = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// rabbitUsers are the definitions' users: password, and the vhost each may
// use ("" none).
var rabbitUsers = []struct{ name, password, vhost string }{
	{"guest", "guest", "/"}, {"app", "apppw1", "orders"}, {"noaccess", "noaccesspw1", ""},
}

// rabbitHash is a password as RabbitMQ's definitions hold it
// (rabbit_password_hashing_sha256): base64 of a 4-byte salt, then
// SHA-256 of the salt and the password.
func rabbitHash(password string) string {
	salt := make([]byte, 4)
	rand.Read(salt)
	sum := sha256.Sum256(append(append([]byte(nil), salt...), password...))
	return base64.StdEncoding.EncodeToString(append(salt, sum[:]...))
}

func cmdRabbitmqd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "rabbitmqd")
	const usage = "usage: rabbitmqd NAME [-tls] [-nowait]"
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf(usage)
	}
	name := args[0]
	fs := flag.NewFlagSet("rabbitmqd", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	secure := fs.Bool("tls", false, "")
	nowait := fs.Bool("nowait", false, "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		ts.Fatalf(usage)
	}
	e := scriptFixtureEnv(ts)
	requireProg(e, "rabbitmq-server")
	dir := ts.MkAbs(name + ".rabbitmq")
	ts.Check(os.MkdirAll(dir, 0o700))
	var ports [4]int
	for i := range ports {
		p, err := fixture.UnusedPort()
		ts.Check(err)
		ports[i] = p
	}
	port, dist, epmd, tlsPort := ports[0], ports[1], ports[2], ports[3]

	defs := map[string]any{
		"vhosts": []map[string]string{{"name": "/"}, {"name": "orders"}},
	}
	var users, perms []map[string]any
	for _, u := range rabbitUsers {
		users = append(users, map[string]any{"name": u.name, "password_hash": rabbitHash(u.password),
			"hashing_algorithm": "rabbit_password_hashing_sha256", "tags": []string{}})
		if u.vhost != "" {
			perms = append(perms, map[string]any{"user": u.name, "vhost": u.vhost, "configure": ".*", "write": ".*", "read": ".*"})
		}
	}
	defs["users"], defs["permissions"] = users, perms
	b, err := json.Marshal(defs)
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(dir, "definitions.json"), b, 0o600))
	conf := fmt.Sprintf("listeners.tcp.default = 127.0.0.1:%d\nloopback_users.guest = true\nload_definitions = %s\nlog.console = true\nlog.file = false\n",
		port, filepath.Join(dir, "definitions.json"))
	if *secure {
		p := state(ts).PKI(ts)
		cert, err := p.ServerCertificate(pkifix.CertGood)
		ts.Check(err)
		certFile, keyFile, err := p.WriteServerFiles("rabbitmq-"+name, cert)
		ts.Check(err)
		conf += fmt.Sprintf("listeners.ssl.default = 127.0.0.1:%d\nssl_options.cacertfile = %s\nssl_options.certfile = %s\nssl_options.keyfile = %s\nssl_options.verify = verify_none\nssl_options.fail_if_no_peer_cert = false\n",
			tlsPort, p.CAFile, certFile, keyFile)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))
		ts.Setenv(name+"_TLS_URL", "amqps://"+addr)
		ts.Setenv(name+"_TLS_HOSTPORT", addr)
		ts.Setenv(name+"_CA", p.CAFile)
	}
	ts.Check(os.WriteFile(filepath.Join(dir, "rabbitmq.conf"), []byte(conf), 0o600))
	ts.Check(os.WriteFile(filepath.Join(dir, "enabled_plugins"), []byte("[].\n"), 0o600))
	ts.Check(os.WriteFile(filepath.Join(dir, "rabbitmq-env.conf"), nil, 0o600))

	cmd := exec.Command(rabbitmqBin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"HOME="+dir,
		"RABBITMQ_CONF_ENV_FILE="+filepath.Join(dir, "rabbitmq-env.conf"),
		"RABBITMQ_NODENAME=hctl-"+strconv.Itoa(port)+"@localhost",
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(port),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(dist),
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"ERL_EPMD_PORT="+strconv.Itoa(epmd),
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}",
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(dir, "rabbitmq.conf"),
		"RABBITMQ_ADVANCED_CONFIG_FILE="+filepath.Join(dir, "advanced.config"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_PLUGINS_EXPAND_DIR="+filepath.Join(dir, "plugins-expand"),
		"RABBITMQ_PID_FILE="+filepath.Join(dir, "rabbitmq.pid"),
		"RABBITMQ_LOGS=-",
	)
	logPath := ts.MkAbs(name + ".rabbitmq.log")
	logf, err := os.Create(logPath)
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	ts.Check(cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	ts.Defer(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		// The node's own epmd daemonizes out of its process group:
		// ask it to stop, on its port.
		exec.Command("epmd", "-port", strconv.Itoa(epmd), "-kill").Run()
	})
	ts.Setenv(name+"_PGID", strconv.Itoa(cmd.Process.Pid))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	setAddrVars(ts, name, "amqp://"+addr, addr, port)
	if *nowait {
		return
	}
	// The listener opens at the end of the boot; ready is the log's line.
	if !fixture.WaitFor(90*time.Second, func() bool {
		select {
		case <-exited:
			return true
		default:
		}
		b, _ := os.ReadFile(logPath)
		return strings.Contains(string(b), "Server startup complete")
	}) {
		b, _ := os.ReadFile(logPath)
		ts.Fatalf("rabbitmq-server did not start within 90s: %s", b)
	}
	select {
	case <-exited:
		b, _ := os.ReadFile(logPath)
		ts.Fatalf("rabbitmq-server exited: %s", b)
	default:
	}
}

func cmdRabbitmqStop(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "rabbitmqstop")
	if len(args) != 1 {
		ts.Fatalf("usage: rabbitmqstop NAME")
	}
	pgid, err := strconv.Atoi(ts.Getenv(args[0] + "_PGID"))
	if err != nil {
		ts.Fatalf("rabbitmqstop: no node %s", args[0])
	}
	ts.Check(syscall.Kill(-pgid, syscall.SIGTERM))
	// Gone once the group is empty (rabbitmqd's goroutine reaps it).
	if !fixture.WaitFor(60*time.Second, func() bool { return syscall.Kill(-pgid, 0) == syscall.ESRCH }) {
		ts.Fatalf("rabbitmq-server did not stop within 60s of SIGTERM")
	}
}

func cmdAMQPClient(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: amqpclient URL")
	}
	conn, err := amqp.DialConfig(args[0], amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)})
	if err == nil {
		fmt.Fprintln(ts.Stdout(), "connected")
		conn.Close()
	} else {
		fmt.Fprintln(ts.Stdout(), err)
	}
	switch {
	case err != nil && !neg:
		ts.Fatalf("amqpclient: %v", err)
	case err == nil && neg:
		ts.Fatalf("amqpclient: connected")
	}
}
