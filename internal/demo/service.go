package demo

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SubjectModes are what the drain-test subject does on SIGTERM: the one
// graceful shutdown the demo shows passing, and the one it shows failing
// (built on first use: a package-level map literal is built at every start).
var SubjectModes = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"good":       "readiness 503 at once, serve for PRE_DRAIN_MS, close the listener, finish in-flight requests, exit 0",
		"closeearly": "close the listener at once (no pre-drain), finish in-flight requests, exit 0",
	}
})

// DrainSubject is the demo's drain-test subject, run as its own process (the
// healthctl binary re-executed with the hidden demo-service word), so
// that it receives a real SIGTERM. It serves /ready and /live (200 until
// it drains) and /slow (half its body at once, the rest after -slow) on
// -addr, a loopback address, and on SIGTERM shuts down as -mode says.
// PRE_DRAIN_MS and SHUTDOWN_TIMEOUT_MS come from the environment, as
// drain-test sets them (default 5000 and 20000). It returns the process's
// exit status.
func DrainSubject(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo-service", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "listen address (loopback)")
	mode := fs.String("mode", "good", "behaviour on SIGTERM: good or closeearly")
	slow := fs.Duration("slow", time.Second, "how long /slow takes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if _, ok := SubjectModes()[*mode]; !ok {
		fmt.Fprintf(stderr, "demo-service: -mode %q: want good or closeearly\n", *mode)
		return 2
	}
	if host, _, err := net.SplitHostPort(*addr); err != nil || host != loopback {
		fmt.Fprintf(stderr, "demo-service: -addr %q: want %s:PORT\n", *addr, loopback)
		return 2
	}
	envMS := func(name string, def int) time.Duration {
		if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n >= 0 {
			return time.Duration(n) * time.Millisecond
		}
		return time.Duration(def) * time.Millisecond
	}
	preDrain, shutdownTimeout := envMS("PRE_DRAIN_MS", 5000), envMS("SHUTDOWN_TIMEOUT_MS", 20000)

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	l, err := net.Listen("tcp4", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "demo-service: %v\n", err)
		return 3
	}
	var (
		mu    sync.Mutex
		ready = true
	)
	status := func(w http.ResponseWriter, code int, s string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"status":%q}`+"\n", s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		ok := ready
		mu.Unlock()
		if !ok {
			status(w, http.StatusServiceUnavailable, "not ready")
			return
		}
		status(w, http.StatusOK, "ready")
	})
	// Liveness stays 200 while it drains: the process is alive.
	mux.HandleFunc("/live", func(w http.ResponseWriter, _ *http.Request) { status(w, http.StatusOK, "alive") })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		body := []byte(strings.Repeat("drain-test in-flight body\n", 1000))
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		time.Sleep(*slow)
		w.Write(body[len(body)/2:])
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)

	<-sigs
	if *mode == "good" {
		mu.Lock()
		ready = false
		mu.Unlock()
		time.Sleep(preDrain)
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(shutdownTimeout-preDrain, time.Second))
	defer cancel()
	_ = srv.Shutdown(ctx)
	return 0
}
