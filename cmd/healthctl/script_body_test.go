// Script commands for the request-body scripts (testdata/script/probe_body_*.txtar):
//
//	bodyd NAME LOG
//	    an HTTP fixture on loopback for request bodies; sets $NAME_URL.
//	    /sum reads the whole body and appends "METHOD /sum BYTES SHA256" to
//	    LOG, then answers 200; /307 appends "METHOD /307 -" without reading
//	    the body and answers 307 to /sum; /noread takes the request's
//	    headers and then reads nothing more, ever (the connection is held
//	    until the client closes it or the script ends): a server that never
//	    reads an upload.
//	datafile FILE SIZE
//	    writes SIZE bytes (N, NKiB or NMiB, up to 256MiB) of a fixed
//	    pseudo-random sequence to FILE, without holding them in memory.
//	samebody LOG FILE N
//	    fails unless LOG has exactly N /sum lines and each names FILE's
//	    size and SHA-256: the server got the whole body, byte for byte.
//	peakrss MAXMIB WANT PROG [ARGS...]   (Linux)
//	    runs PROG (from the script's PATH, with the script's environment)
//	    and fails unless it exits with WANT and its peak resident set
//	    (its VmHWM, not the parent-inflated ru_maxrss: see
//	    script_body_linux_test.go) stays within MAXMIB MiB; its stdout and
//	    stderr are then what the stdout and stderr commands check.
//
// Condition: [race] holds when healthctl (this test binary) was built with
// -race, whose shadow memory and bookkeeping raise a peak resident set
// (probe_body_noread: 25 MiB without it, 54–113 MiB with it).
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	extraCmds["bodyd"] = cmdBodyd
	extraCmds["datafile"] = cmdDataFile
	extraCmds["samebody"] = cmdSameBody
	extraConds["race"] = func() (bool, error) { return raceBuild, nil }
}

// cmdBodyd implements bodyd NAME LOG.
func cmdBodyd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "bodyd")
	if len(args) != 2 {
		ts.Fatalf("usage: bodyd NAME LOG")
	}
	logFile := ts.MkAbs(args[1])
	var mu sync.Mutex
	logLine := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, s)
			f.Close()
		}
	}
	done := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/sum", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			logLine(fmt.Sprintf("%s /sum error %v", r.Method, err))
			http.Error(w, "body not read", http.StatusBadRequest)
			return
		}
		logLine(fmt.Sprintf("%s /sum %d %s", r.Method, n, hex.EncodeToString(h.Sum(nil))))
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/307", func(w http.ResponseWriter, r *http.Request) {
		logLine(r.Method + " /307 -")
		w.Header().Set("Location", "/sum")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/noread", func(w http.ResponseWriter, r *http.Request) {
		logLine(r.Method + " /noread -")
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		<-done
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	ts.Defer(func() {
		close(done)
		srv.Close()
	})
	addr := ln.Addr().(*net.TCPAddr)
	setAddrVars(ts, args[0], "http://"+addr.String(), addr.String(), addr.Port)
}

// dataSeed makes datafile's bytes: the same for every run.
const dataSeed = 43

// cmdDataFile implements datafile FILE SIZE.
func cmdDataFile(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "datafile")
	if len(args) != 2 {
		ts.Fatalf("usage: datafile FILE SIZE")
	}
	n, err := parseSize(args[1])
	if err != nil || n < 0 || n > 256<<20 {
		ts.Fatalf("datafile: size %q: want N, NKiB or NMiB up to 256MiB", args[1])
	}
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	r := rand.NewChaCha8([32]byte{dataSeed})
	_, err = io.CopyN(f, r, n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	ts.Check(err)
}

// cmdSameBody implements samebody LOG FILE N.
func cmdSameBody(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "samebody")
	if len(args) != 3 {
		ts.Fatalf("usage: samebody LOG FILE N")
	}
	want, err := strconv.Atoi(args[2])
	if err != nil {
		ts.Fatalf("usage: samebody LOG FILE N: %v", err)
	}
	f, err := os.Open(ts.MkAbs(args[1]))
	ts.Check(err)
	h := sha256.New()
	size, err := io.Copy(h, f)
	f.Close()
	ts.Check(err)
	line := fmt.Sprintf("/sum %d %s", size, hex.EncodeToString(h.Sum(nil)))
	lf, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	defer lf.Close()
	got := 0
	sc := bufio.NewScanner(lf)
	for sc.Scan() {
		if _, rest, _ := strings.Cut(sc.Text(), " "); strings.HasPrefix(rest, "/sum ") {
			if rest != line {
				ts.Fatalf("samebody: the server got %q, want %q (%s)", rest, line, args[1])
			}
			got++
		}
	}
	ts.Check(sc.Err())
	if got != want {
		ts.Fatalf("samebody: %d bodies received whole, want %d", got, want)
	}
}
