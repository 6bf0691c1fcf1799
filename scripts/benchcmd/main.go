//go:build linux

// Linux only: peak RSS is getrusage's ru_maxrss, in KiB on Linux (bytes on
// macOS, absent on Windows); the benchmarks are measured on Linux.

// Command benchcmd runs commands many times, interleaved, and prints the
// median and p90 wall time and the peak RSS of each: the side-by-side
// measurement scripts/bench-probe.sh uses. It also prints each command's
// median CPU time (user+sys, from wait4's rusage) and its ratio to the last
// command's: on a loaded machine CPU time varies far less than wall time.
//
//	go run ./scripts/benchcmd -n 200 -- 'curl -sf URL' 'healthctl probe URL'
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 100, "runs per command (bounded: at most 5000)")
	warm := flag.Int("warmup", 5, "unmeasured runs per command first")
	flag.Parse()
	cmds := flag.Args()
	if len(cmds) == 0 || *n < 1 || *n > 5000 {
		fmt.Fprintln(os.Stderr, "usage: benchcmd [-n RUNS] -- 'CMD ARGS' ['CMD ARGS'...]")
		os.Exit(2)
	}
	walls := make([][]time.Duration, len(cmds))
	cpus := make([][]time.Duration, len(cmds))
	rss := make([]int64, len(cmds))
	fails := make([]int, len(cmds))
	for i := 0; i < *warm+*n; i++ {
		for c, line := range cmds {
			args := strings.Fields(line)
			cmd := exec.Command(args[0], args[1:]...)
			start := time.Now()
			err := cmd.Run()
			d := time.Since(start)
			if cmd.ProcessState == nil {
				fmt.Fprintf(os.Stderr, "benchcmd: %s: %v\n", line, err)
				os.Exit(1)
			}
			if i < *warm {
				continue
			}
			if err != nil {
				fails[c]++
			}
			walls[c] = append(walls[c], d)
			cpus[c] = append(cpus[c], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > rss[c] {
				rss[c] = ru.Maxrss
			}
		}
	}
	fmt.Printf("%-60s %6s %9s %9s %9s %8s %9s %9s %10s\n", "command", "runs", "p50", "p90", "min", "peakRSS", "cpu_p50", "cpu_ratio", "wall_ratio")
	for c := range cmds {
		slices.Sort(cpus[c])
		slices.Sort(walls[c])
	}
	last := len(cmds) - 1
	floorCPU, floorWall := cpus[last][len(cpus[last])/2], walls[last][len(walls[last])/2]
	for c, line := range cmds {
		w := walls[c]
		slices.Sort(w)
		cpu := cpus[c][len(cpus[c])/2]
		fmt.Printf("%-60s %6d %9s %9s %9s %6.1fMiB %9s %8.3fx %9.3fx", trim(line, 60), len(w), ms(w[len(w)/2]), ms(w[len(w)*9/10]), ms(w[0]), float64(rss[c])/1024,
			ms(cpu), float64(cpu)/float64(floorCPU), float64(w[len(w)/2])/float64(floorWall))
		if fails[c] > 0 {
			fmt.Printf("  (%d runs exited non-zero)", fails[c])
		}
		fmt.Println()
	}
	if len(cmds) == 2 {
		a, b := walls[0][len(walls[0])/2], walls[1][len(walls[1])/2]
		fmt.Printf("ratio of medians (second / first): %.2fx\n", float64(b)/float64(a))
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
