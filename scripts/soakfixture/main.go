// Command soakfixture serves the faults of scripts/soak.sh on loopback and
// writes a targets file spreading N targets over them: answers 200, 503,
// hangs after the request, resets, a TLS certificate no one trusts, a
// closed port (refused), and a listener whose accept queue is full
// (connect timeout). Each target has its own name and path. It runs until
// SIGINT/SIGTERM or -max, then closes every fixture.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
)

func main() {
	n := flag.Int("n", 1000, "targets")
	out := flag.String("targets", "targets.yaml", "targets file to write")
	dir := flag.String("pki", "", "directory for the CA (default: beside -targets)")
	maxD := flag.Duration("max", 2*time.Hour, "stop after this long whatever happens")
	flag.Parse()
	var cleanups []func()
	c := fixture.DeferFunc(func(f func()) { cleanups = append(cleanups, f) })
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()
	if *dir == "" {
		*dir = filepath.Join(filepath.Dir(*out), "pki")
	}
	pki, err := pkifix.NewPKI(*dir)
	check(err)
	type fault struct {
		name string
		url  string
		per  int // targets per 10
	}
	var faults []fault
	add := func(name string, per int, opts fixture.HTTPOptions) {
		s, err := fixture.NewHTTPServer(c, opts)
		check(err)
		faults = append(faults, fault{name, s.URL, per})
	}
	add("ok", 4, fixture.HTTPOptions{})
	add("503", 1, fixture.HTTPOptions{Status: 503})
	add("hang", 1, fixture.HTTPOptions{Mode: fixture.ModeHang})
	add("reset", 1, fixture.HTTPOptions{Mode: fixture.ModeReset})
	add("tls", 1, fixture.HTTPOptions{TLS: fixture.TLSSelfSigned, PKI: pki})
	cp, err := fixture.NewClosedPort(c)
	check(err)
	faults = append(faults, fault{"refused", cp.URL(), 1})
	bl, err := fixture.NewBacklog(c)
	check(err)
	faults = append(faults, fault{"backlog", bl.URL(), 1})

	var b strings.Builder
	b.WriteString("targets:\n")
	var slots []fault
	for _, f := range faults {
		for range f.per {
			slots = append(slots, f)
		}
	}
	counts := map[string]int{}
	for i := range *n {
		f := slots[i%len(slots)]
		counts[f.name]++
		fmt.Fprintf(&b, "  - name: %s-%04d\n    url: %s/t/%d\n", f.name, i, f.url, i)
	}
	check(os.WriteFile(*out+".tmp", []byte(b.String()), 0o644))
	check(os.Rename(*out+".tmp", *out))
	fmt.Printf("soakfixture: %d targets in %s:", *n, *out)
	for _, f := range faults {
		fmt.Printf(" %s %d", f.name, counts[f.name])
	}
	fmt.Println()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case <-time.After(*maxD):
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "soakfixture:", err)
		os.Exit(1)
	}
}
