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

// String is "K/N" ("" for no sharding).
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// DefaultConcurrency is --concurrency's default: 256 probes at once, fewer
// when the soft limit of open files is low. Each probe holds one socket (two
// while a proxy is used), and the process needs a reserve for its own files
// (state, lock, hook pipes, the --listen server), so it is
// min(256, (soft NOFILE - 64) / 2), at least 1.
func DefaultConcurrency() int {
	return concurrencyFor(softNOFILE())
}

func concurrencyFor(nofile uint64) int {
	const reserve, most = 64, 256
	if nofile <= reserve+2 {
		return 1
	}
	return int(min(most, (nofile-reserve)/2))
}

// MemoryLimit is the Go runtime's soft memory limit for one sweep (--once)
// over n targets, set unless GOMEMLIMIT is. A sweep's live heap is ~8 MiB of
// probes in flight plus ~1.6 KiB per target (its result, decision and state,
// kept until the sweep is printed), and GOGC alone lets the heap grow to
// twice that: 10,000 targets peaked at 63-65 MiB RSS, at the edge of the
// 64 MiB budget, and 100,000 at 374 MiB. The limit holds the runtime near
// 52 MiB up to 10,000 targets (measured: 55-56 MiB RSS, ~3 % more CPU);
// past that it grows by 1.9 KiB a target, which keeps 100,000 targets at
// ~230 MiB RSS (budget 256 MiB) for ~25 % more collector work than GOGC's
// own headroom (3.5 KiB a target) gave. It is soft: past it the runtime
// collects harder, it never fails an allocation.
func MemoryLimit(n int) int64 {
	const base, upTo, perTarget = 52 << 20, 10000, 1946
	return base + int64(max(0, n-upTo))*perTarget
}
