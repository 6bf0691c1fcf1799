// Package limits is what the process's own limits allow: the number of
// probes at once that leaves room under the open-files limit. probe and
// watch both default to it.
package limits

// Concurrency is --concurrency's default: 256 probes at once, fewer
// when the soft limit of open files is low. Each probe holds one socket (two
// while a proxy is used), and the process needs a reserve for its own files
// (state, lock, hook pipes, the --listen server), so it is
// min(256, (soft NOFILE - 64) / 2), at least 1.
func Concurrency() int {
	return concurrencyFor(softNOFILE())
}

func concurrencyFor(nofile uint64) int {
	const reserve, most = 64, 256
	if nofile <= reserve+2 {
		return 1
	}
	return int(min(most, (nofile-reserve)/2))
}

// OpenFiles is the soft limit of open files (1024 when unknown): what
// the --listen server sizes its connections by.
func OpenFiles() uint64 { return softNOFILE() }
