package proc

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// Stat is what the rooms that walk the process tree read of a process:
// its parent, its start time (clock ticks since boot: with the pid, it
// names the process even after the pid is reused) and whether it is dead
// but not yet reaped.
type Stat struct {
	PID, PPID int
	Start     uint64
	Zombie    bool
}

// errNoStat is a /proc/PID/stat whose text is not the kernel's shape.
var errNoStat = errors.New("unreadable /proc stat line")

// ReadStat reads pid's /proc/PID/stat. The error is os.ErrNotExist's kind
// when the process is gone.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	// "pid (comm) S ppid …": comm may hold spaces and parentheses. After
	// it, field 3 (state) is f[0]; field 22 (starttime) is f[19].
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, errNoStat
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return Stat{}, errNoStat
	}
	st := Stat{PID: pid, Zombie: f[0] == "Z" || f[0] == "X"}
	st.PPID, _ = strconv.Atoi(f[1])
	st.Start, _ = strconv.ParseUint(f[19], 10, 64)
	return st, nil
}

// Table reads every process's Stat from /proc (nil when /proc cannot be
// read); processes that end while it reads are left out.
func Table() []Stat {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]Stat, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := ReadStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// Descendants lists the processes below root (not root itself) from tab,
// breadth first, at most limit of them.
func Descendants(tab []Stat, root, limit int) []Stat {
	kids := map[int][]Stat{}
	for _, p := range tab {
		kids[p.PPID] = append(kids[p.PPID], p)
	}
	var out []Stat
	queue := []int{root}
	for len(queue) > 0 && len(out) < limit {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			if len(out) == limit {
				break
			}
			out = append(out, k)
			queue = append(queue, k.PID)
		}
	}
	return out
}
