package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// Script command:
//
//	hcio NAME PERIOD
//	    a loopback stand-in for healthchecks.io's ping API with a check of
//	    the given period; sets $NAME_URL. POST /ping/KEY marks the check up,
//	    /ping/KEY/fail down, /ping/KEY/start starts a run (the status does
//	    not change); a check that got no success or failure ping for PERIOD
//	    goes down, as healthchecks.io's does once its period (and grace)
//	    has passed. $WORK/NAME.log gets one line per event ("success up",
//	    "start up", "fail down", "late down"), rewritten whole on each.
func init() { extraCmds["hcio"] = cmdHCIO }

func cmdHCIO(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "hcio")
	if len(args) != 2 {
		ts.Fatalf("usage: hcio NAME PERIOD")
	}
	period, err := time.ParseDuration(args[1])
	if err != nil || period <= 0 {
		ts.Fatalf("usage: hcio NAME PERIOD (a positive Go duration)")
	}
	logPath := ts.MkAbs(args[0] + ".log")
	var (
		mu     sync.Mutex
		status = "new"
		last   time.Time
		lines  []string
	)
	// note records an event; mu is held.
	note := func(event string) {
		lines = append(lines, event+" "+status)
		tmp := logPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err == nil {
			os.Rename(tmp, logPath)
		}
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/start"):
			note("start")
		case strings.HasSuffix(r.URL.Path, "/fail"):
			status, last = "down", time.Now()
			note("fail")
		default:
			status, last = "up", time.Now()
			note("success")
		}
		w.Write([]byte("OK"))
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv.Listener = ln
	srv.Start()
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(period / 10)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				mu.Lock()
				if status == "up" && time.Since(last) > period {
					status = "down"
					note("late")
				}
				mu.Unlock()
			}
		}
	}()
	ts.Defer(func() { close(stop); srv.Close() })
	ts.Setenv(args[0]+"_URL", srv.URL)
}
