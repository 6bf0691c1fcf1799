//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// treeCPU is the CPU time pid and every process under it (all their
// threads) have used so far: the sum of the first field of each thread's
// /proc schedstat, in nanoseconds. It is how much of the machine the server
// (nginx's master and its worker) spent on a run, measured around the run.
func treeCPU(pid int) (time.Duration, error) {
	var total time.Duration
	seen := map[int]bool{}
	todo := []int{pid}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", p))
		if err != nil || len(tasks) == 0 {
			if p == pid {
				return 0, fmt.Errorf("process %d: no /proc entry", pid)
			}
			continue // a child that has exited since
		}
		for _, t := range tasks {
			if b, err := os.ReadFile(filepath.Join(t, "schedstat")); err == nil {
				if f := strings.Fields(string(b)); len(f) > 0 {
					if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						total += time.Duration(ns)
					}
				}
			}
			if b, err := os.ReadFile(filepath.Join(t, "children")); err == nil {
				for _, c := range strings.Fields(string(b)) {
					if n, err := strconv.Atoi(c); err == nil {
						todo = append(todo, n)
					}
				}
			}
		}
	}
	return total, nil
}

// serverMeter measures the server's CPU around each run; a zero pid
// measures nothing.
type serverMeter struct{ pid int }

// around runs f and returns what the server spent meanwhile (0 when it
// is not measured or /proc cannot tell).
func (m serverMeter) around(f func() (result, error)) (result, error) {
	if m.pid == 0 {
		return f()
	}
	before, berr := treeCPU(m.pid)
	r, err := f()
	after, aerr := treeCPU(m.pid)
	if berr == nil && aerr == nil && after > before {
		r.server = after - before
	}
	return r, err
}
