package main

// The fake AMQP broker of the amqp:// scripts (testdata/script/*amqp*).
//
//	amqpd NAME [-mode ok|auth|auth-silent|vhost|internal|header|garbage|silent|close] [-login USER:PASSWORD]
//	    starts internal/fixture/wirefix's fake broker on 127.0.0.1 answering as
//	    the mode says (default ok: Start, Tune, Open-Ok, Close-Ok; with
//	    -login only those credentials, Close 403 to others); sets $NAME_URL
//	    (amqp://127.0.0.1:PORT), $NAME_HOSTPORT, $NAME_PORT. What it saw is
//	    in $WORK/NAME.amqp.log, one event a line ("header", "login PLAIN
//	    USER PASSWORD", "open VHOST", "close 200", "close-ok").

import (
	"flag"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/wirefix"
)

func init() { extraCmds["amqpd"] = cmdAMQPd }

func cmdAMQPd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "amqpd")
	const usage = "usage: amqpd NAME [-mode MODE] [-login USER:PASSWORD]"
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf(usage)
	}
	fs := flag.NewFlagSet("amqpd", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	mode := fs.String("mode", "ok", "")
	login := fs.String("login", "", "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		ts.Fatalf(usage)
	}
	user, password, _ := strings.Cut(*login, ":")
	srv, err := wirefix.NewAMQPServer(fixture.DeferFunc(ts.Defer), wirefix.AMQPMode(*mode), user, password)
	ts.Check(err)
	srv.LogTo(ts.MkAbs(args[0] + ".amqp.log"))
	setAddrVarsFrom(ts, args[0], "amqp", srv.Addr)
}
