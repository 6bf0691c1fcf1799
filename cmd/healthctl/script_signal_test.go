// Script commands for the probe signal scripts (testdata/script/probe_signal*.txtar):
//
//	sigd NAME FILE
//	    an HTTP fixture on 127.0.0.1 with two paths, setting $NAME_URL:
//	    /fast answers 200 at once and, once the client has read the answer
//	    and closed the connection, appends "fast done N" to FILE; /hang
//	    appends "hang N" to FILE and never answers (until the script ends).
//	    N counts each path's requests from 1. So FILE matching both lines
//	    means one probe has finished and the other is in flight: the
//	    moment to send a signal; "fast done 4" means four have finished.
package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
)

func init() {
	extraCmds["sigd"] = cmdSigd
}

// cmdSigd implements sigd NAME FILE.
func cmdSigd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "sigd")
	if len(args) != 2 {
		ts.Fatalf("usage: sigd NAME FILE")
	}
	file := ts.MkAbs(args[1])
	var mu sync.Mutex
	counts := map[string]int{}
	note := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		counts[line]++
		line += " " + strconv.Itoa(counts[line])
		f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return
		}
		f.WriteString(line + "\n")
		f.Close()
	}
	stop := make(chan struct{})
	l, err := net.Listen("tcp4", fixture.Loopback4+":0")
	ts.Check(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang":
			note("hang")
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		case "/fast":
			// Answer on the raw connection and keep it open: the client
			// closing it says it has read the whole answer.
			c, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n")
			rw.Flush()
			io.Copy(io.Discard, bufio.NewReader(c))
			note("fast done")
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(l)
	ts.Defer(func() {
		close(stop)
		srv.Close()
	})
	addr := l.Addr().(*net.TCPAddr)
	setAddrVars(ts, args[0], "http://"+addr.String(), addr.String(), addr.Port)
}
