//go:build linux

package main

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

// ratios is a[i]/b[i] over the runs where b[i] was measured, sorted.
func ratios(a, b []time.Duration) []float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			r = append(r, float64(a[i])/float64(b[i]))
		}
	}
	slices.Sort(r)
	return r
}

// pairedMedian is the median of a[i]/b[i] over the runs (0 without any).
func pairedMedian(a, b []time.Duration) float64 {
	if r := ratios(a, b); len(r) > 0 {
		return r[len(r)/2]
	}
	return 0
}

// pairedRatios is a[i]/b[i] over the runs: the median and the range.
func pairedRatios(a, b []time.Duration) string {
	r := ratios(a, b)
	if len(r) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx (%.2f-%.2fx over %d runs)", r[len(r)/2], r[0], r[len(r)-1], len(r))
}

// printFloor prints one floor's medians beside healthctl's (walls, cpus)
// and ab's, if it was run.
func printFloor(what string, floors []result, walls, cpus []time.Duration, abs []result) {
	if len(floors) == 0 {
		return
	}
	var fw, fc []time.Duration
	for _, r := range floors {
		fw, fc = append(fw, r.wall), append(fc, r.cpu)
	}
	fmt.Printf("%6s          %s, same runs: wall %s, CPU %s; healthctl/floor: wall %.2fx, CPU %.2fx",
		"", what, median(fw), median(fc), float64(medianOf(walls))/float64(medianOf(fw)), float64(medianOf(cpus))/float64(medianOf(fc)))
	if len(abs) > 0 {
		var aw []time.Duration
		for _, r := range abs {
			aw = append(aw, r.wall)
		}
		fmt.Printf("; floor/ab: wall %.2fx", float64(medianOf(fw))/float64(medianOf(aw)))
	}
	fmt.Println(" (medians)")
}

// printCurl prints a curl client's runs against the sweeps of the same
// rounds (walls, cpus): the medians, the paired ratios, the connections it
// opened, and at 10,000 targets whether the sweep was within 1.0x of it.
func printCurl(n int, what string, curls []result, walls, cpus []time.Duration, note string) {
	if len(curls) == 0 {
		return
	}
	var cw, cc []time.Duration
	var conns []int
	for _, r := range curls {
		cw, cc, conns = append(cw, r.wall), append(cc, r.cpu), append(conns, r.conns)
	}
	fmt.Printf("%6s          %s over the same %d URLs, same runs: wall %s, CPU %s, connections opened %v; healthctl/curl: wall %.2fx, CPU %.2fx (medians)\n", "",
		what, n, median(cw), median(cc), conns, float64(medianOf(walls))/float64(medianOf(cw)), float64(medianOf(cpus))/float64(medianOf(cc)))
	fmt.Printf("%6s          paired by run (each sweep over the curl run of its round): wall %s\n", "", pairedRatios(walls, cw))
	if n == 10000 {
		verdict := "met"
		if pairedMedian(walls, cw) > 1.0 {
			verdict = "NOT met"
		}
		fmt.Printf("%6s          within 1.0x of it (paired median): %s in this run (%s)\n", "", verdict, note)
	}
}

func median(d []time.Duration) string { return medianOf(d).Round(time.Millisecond).String() }

// medianOf is the middle value of v (the upper one of an even count).
func medianOf[T cmp.Ordered](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

func list(w []time.Duration, r []int64) string {
	var parts []string
	for i := range w {
		parts = append(parts, fmt.Sprintf("%s/%s", w[i].Round(time.Millisecond), mib(r[i])))
	}
	return strings.Join(parts, " ")
}

// printMachine prints, when the server's CPU was measured (-server-pid),
// what each run cost the whole machine (the client's CPU and the server's)
// and how many cores that kept busy. On a machine the client and the
// server share, a run that keeps every core busy takes (client CPU +
// server CPU) / cores: healthctl's wall time within 1.5x ab's then leaves
// it 1.5 x (ab's CPU + the server's for ab) - the server's for healthctl
// of CPU time, the client allowance printed here (median of the rounds).
func printMachine(hc, abs, floors, bares, epolls []result) {
	if len(hc) == 0 || hc[0].server == 0 {
		return
	}
	line := func(what string, rs []result) {
		if len(rs) == 0 {
			return
		}
		var cpu, srv, busy []float64
		for _, r := range rs {
			cpu = append(cpu, r.cpu.Seconds()*1e3)
			srv = append(srv, r.server.Seconds()*1e3)
			busy = append(busy, (r.cpu+r.server).Seconds()/r.wall.Seconds())
		}
		fmt.Printf("%6s            %-10s client CPU %4.0f ms + server CPU %4.0f ms; %.2f cores busy (medians)\n", "", what,
			medianOf(cpu), medianOf(srv), medianOf(busy))
	}
	fmt.Printf("%6s          the machine (client and server share it; %d cores):\n", "", runtime.NumCPU())
	line("healthctl", hc)
	line("ab", abs)
	line("Go floor", floors)
	line("bare floor", bares)
	line("epoll", epolls)
	if len(abs) == 0 {
		return
	}
	var allow, ratio, used []float64
	for i := range min(len(hc), len(abs)) {
		allow = append(allow, (1.5*(abs[i].cpu+abs[i].server).Seconds()-hc[i].server.Seconds())*1e3)
		ratio = append(ratio, (hc[i].cpu+hc[i].server).Seconds()/(abs[i].cpu+abs[i].server).Seconds())
		used = append(used, hc[i].cpu.Seconds()*1e3)
	}
	fmt.Printf("%6s          machine CPU healthctl/ab, paired: %.2fx; 1.5x ab leaves the client %.0f ms of CPU (healthctl used %.0f) (medians)\n", "",
		medianOf(ratio), medianOf(allow), medianOf(used))
}

// client is one client's runs, named for printing.
type client struct {
	name string
	rs   []result
}

// printPerTarget prints each client's CPU time per target, split into user
// and system time (medians). The system part is mostly the kernel's work
// for a loopback connection, the same for every client and dear or cheap
// as the host is that hour (it doubled between two days here); the user
// part is the client's own code, and steadier across hosts: ab's wall
// time, which is nearly all system time, moves the ratio to it with the
// host while healthctl's own work stays where it is. The split is the
// kernel's estimate (its CPU time shared out by the ticks that found the
// process in user or system mode): steady over a 10,000-target run's
// second of CPU, coarse over 1,000 targets' tenth, where the start-up's
// milliseconds also weigh.
func printPerTarget(n int, clients []client) {
	fmt.Printf("%6s          CPU per target, user + system (medians):", "")
	sep := " "
	for _, c := range clients {
		if len(c.rs) == 0 {
			continue
		}
		var user, sys []float64
		for _, r := range c.rs {
			user = append(user, r.user.Seconds()*1e6/float64(n))
			sys = append(sys, (r.cpu-r.user).Seconds()*1e6/float64(n))
		}
		fmt.Printf("%s%s %.1f + %.1f µs", sep, c.name, medianOf(user), medianOf(sys))
		sep = "; "
	}
	fmt.Println()
}
