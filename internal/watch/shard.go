package watch

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is --shard K/N: keep the targets whose name hashes (FNV-1a, 32 bit)
// to K modulo N. K counts from 0, as a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX does. The zero Shard keeps everything.
type Shard struct{ K, N int }

// ParseShard reads K/N with 0 <= K < N.
func ParseShard(s string) (Shard, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(strings.TrimSpace(ks))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("want K/N, e.g. 0/3 (K from 0 to N-1)")
	}
	if n < 1 || k < 0 || k >= n {
		return Shard{}, fmt.Errorf("want 0 <= K < N and N >= 1")
	}
	return Shard{K: k, N: n}, nil
}

// Keeps reports whether the target named name belongs to this shard. The
// split depends only on the name, so it is stable across runs and machines.
func (s Shard) Keeps(name string) bool {
	if s.N <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32()%uint32(s.N)) == s.K
}

// Filter keeps the targets of this shard, in their order, in targets'
// own array.
func (s Shard) Filter(targets []*Endpoint) []*Endpoint {
	kept := targets[:0]
	for _, t := range targets {
		if s.Keeps(t.Name) {
			kept = append(kept, t)
		}
	}
	return kept
}

// String is "K/N" ("" for no sharding).
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// MemoryLimit is the Go runtime's soft memory limit for one sweep (--once)
// over n targets, own of which have a probe template of their own (options
// no other entry shares; a URL's query, userinfo or headers of its own need
// none), set unless
// GOMEMLIMIT is. It is the performance budget's line less the process's
// memory beside the Go heap (~13 MiB: the binary's pages, stacks), not a
// guess at the live heap: 80 MiB up to 10,000 targets, 1,724 bytes a
// target past that (228 MiB at 100,000; RSS ~241 MiB against the 256 MiB
// budget), and 3 KiB for each own template (the template, ~1.7 KB, its
// sources and headers: what such a target holds beyond the others; 2 KiB
// sat below the working set, docs/benchmarks.md "The memory policy").
//
// A limit below the sweep's working set makes the collector run without
// pause: this one is above it, so at 10,000 targets the collector runs as
// GOGC says and at 100,000 the limit takes the place of GOGC's doubling, a
// little CPU for the memory budget (docs/benchmarks.md, "The memory
// policy"). It is soft: past it the runtime collects harder,
// it never fails an allocation.
func MemoryLimit(n, own int) int64 {
	const base, upTo, perTarget, perTemplate = 80 << 20, 10000, 1724, 3 << 10
	return base + int64(max(0, n-upTo))*perTarget + int64(own)*perTemplate
}

// LongRunningMemoryLimit is the soft memory limit of a long-running watch
// over n targets (own as for MemoryLimit), set unless GOMEMLIMIT is: twice
// the one sweep's (--once's) less 48 MiB for what the process holds
// beside the Go heap (the listener's connections, overlapping sweeps'
// stacks), and never below 256 MiB. Its live heap holds the last sweep
// (and, with --listen, the status and metrics it serves) while the next
// is probed: GOGC's doubling of it took a long-running --listen watch
// to 2.8 times --once's peak at 100,000 targets; under this line it
// stays within twice (docs/benchmarks.md). At 10,000 targets and below
// the collector runs as GOGC says (the heap stays well under 256 MiB).
func LongRunningMemoryLimit(n, own int) int64 {
	return max(2*MemoryLimit(n, own)-48<<20, 256<<20)
}
