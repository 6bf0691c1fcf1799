package main

// The MySQL servers of the mysql:// scripts (testdata/script/*mysql*):
//
//	mysqld NAME [-mode MODE]
//	    a loopback fake MySQL server (internal/fixture/wirefix.MySQL): greeting
//	    (the default: a login as app/apppw succeeds, COM_PING answers),
//	    err1040, err1045, err1129, shutdown, starting, err1105, garbage,
//	    hang, close; sets $NAME_URL (mysql://127.0.0.1:PORT),
//	    $NAME_HOSTPORT, $NAME_PORT.
//	mariadbd NAME
//	    Debian's mariadb-server (.ci/deps/kinds.sh) on a free loopback
//	    port, its data under $WORK/NAME, an account app/apppw on the
//	    database appdb (the anonymous accounts dropped), killed when the
//	    script ends; sets $NAME_URL, $NAME_HOSTPORT, $NAME_PORT and
//	    $NAME_SOCKET (for the mariadb client).

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/wirefix"
)

func init() {
	extraCmds["mysqld"] = cmdMySQLD
	extraCmds["mariadbd"] = cmdMariaDBD
}

// cmdMySQLD implements mysqld NAME [-mode MODE].
func cmdMySQLD(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "mysqld")
	mode := wirefix.MySQLGreeting
	switch {
	case len(args) == 3 && args[1] == "-mode":
		mode = args[2]
	case len(args) != 1:
		ts.Fatalf("usage: mysqld NAME [-mode MODE]")
	}
	l, err := net.Listen("tcp4", fixture.Loopback4+":0")
	ts.Check(err)
	holdListener(ts, l, func(c net.Conn) { wirefix.MySQL(c, mode) })
	setAddrVarsFrom(ts, args[0], "mysql", l.Addr().String())
}

// cmdMariaDBD implements mariadbd NAME.
func cmdMariaDBD(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "mariadbd")
	if len(args) != 1 {
		ts.Fatalf("usage: mariadbd NAME")
	}
	e := scriptFixtureEnv(ts)
	server := requireProg(e, "mariadbd")
	install := requireProg(e, "mariadb-install-db")
	client := requireProg(e, "mariadb")
	name := args[0]
	dir := filepath.Join(ts.Getenv("WORK"), name)
	ts.Check(os.MkdirAll(dir, 0o755))
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	out, err := exec.Command(install, "--no-defaults", "--datadir="+data, "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput()
	if err != nil {
		ts.Fatalf("mariadb-install-db: %v: %s", err, out)
	}
	port, err := fixture.UnusedPort()
	ts.Check(err)
	cmd := exec.Command(server, "--no-defaults", "--datadir="+data, "--user=root", "--bind-address=127.0.0.1",
		"--port="+strconv.Itoa(port), "--socket="+sock, "--skip-log-bin", "--innodb-buffer-pool-size=8M")
	startServer(e, "mariadbd", cmd, port, filepath.Join(dir, "server.log"))
	sql := strings.Join([]string{
		"DROP USER IF EXISTS ''@'localhost'",
		"CREATE DATABASE appdb",
		"CREATE USER 'app'@'%' IDENTIFIED BY '" + wirefix.MySQLPassword + "'",
		"GRANT ALL ON appdb.* TO 'app'@'%'",
		"FLUSH PRIVILEGES",
	}, "; ")
	if out, err := exec.Command(client, "--no-defaults", "--socket="+sock, "-uroot", "-e", sql).CombinedOutput(); err != nil {
		ts.Fatalf("mariadb: %v: %s", err, out)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	setAddrVars(ts, name, "mysql://"+addr, addr, port)
	ts.Setenv(name+"_SOCKET", sock)
}
