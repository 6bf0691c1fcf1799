// Command benchfixture measures wait-healthy's detection lag: for each run
// it starts a loopback fixture that refuses connections (mode refused) or
// answers 503 (mode 503) until a random moment, then answers 200; starts
// wait-healthy against it; and logs the switch time and wait-healthy's exit
// time, both on the monotonic clock of this one process. The lag is the
// time between the two. scripts/bench-wait.sh runs it.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync/atomic"
	"time"
)

func main() {
	bin := flag.String("bin", "healthctl", "the healthctl binary")
	mode := flag.String("mode", "503", "refused or 503: what the fixture does before the switch")
	runs := flag.Int("runs", 20, "runs")
	minD := flag.Duration("min", time.Second, "earliest switch")
	maxD := flag.Duration("max", 3*time.Second, "latest switch")
	verbose := flag.Bool("v", false, "log every run")
	flag.Parse()
	if *mode != "refused" && *mode != "503" {
		fmt.Fprintln(os.Stderr, "benchfixture: -mode refused or 503")
		os.Exit(2)
	}
	var lags []time.Duration
	for i := range *runs {
		d := *minD + rand.N(*maxD-*minD)
		lag, err := run(*bin, *mode, d)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchfixture: run %d: %v\n", i+1, err)
			os.Exit(1)
		}
		if *verbose {
			fmt.Printf("run %2d: switch at %v, lag %.1fms\n", i+1, d.Round(time.Millisecond), ms(lag))
		}
		lags = append(lags, lag)
	}
	slices.Sort(lags)
	fmt.Printf("%-12s runs %d  p50 %6.1fms  p90 %6.1fms  min %6.1fms  max %6.1fms\n",
		*mode+"->200", len(lags), ms(pct(lags, 50)), ms(pct(lags, 90)), ms(lags[0]), ms(lags[len(lags)-1]))
}

// run does one measurement with the switch after d.
func run(bin, mode string, d time.Duration) (time.Duration, error) {
	// Reserve a port: listen, note it, close (refused mode listens again on
	// it at the switch; Go sets SO_REUSEADDR).
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := l.Addr().String()
	start := time.Now()
	var switched atomic.Int64 // ns since start; 0 until the switch
	var after atomic.Bool
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !after.Load() {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})}
	defer srv.Close()
	switch mode {
	case "refused":
		l.Close()
		time.AfterFunc(d, func() {
			l2, err := net.Listen("tcp4", addr)
			switched.Store(int64(time.Since(start)))
			if err != nil {
				fmt.Fprintf(os.Stderr, "benchfixture: listen again on %s: %v\n", addr, err)
				return
			}
			after.Store(true)
			go srv.Serve(l2)
		})
	case "503":
		go srv.Serve(l)
		time.AfterFunc(d, func() {
			after.Store(true)
			switched.Store(int64(time.Since(start)))
		})
	}
	cmd := exec.Command(bin, "wait-healthy", "-q", "http://"+addr+"/health")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("wait-healthy: %v", err)
	}
	exited := time.Since(start)
	sw := time.Duration(switched.Load())
	if sw == 0 {
		return 0, fmt.Errorf("wait-healthy exited 0 before the switch")
	}
	return exited - sw, nil
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
