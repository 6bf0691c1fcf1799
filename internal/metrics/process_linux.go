package metrics

import (
	"bytes"
	"os"
	"strconv"
)

// readProc reads RSS from /proc/self/statm (its second field, in pages)
// and counts /proc/self/fd (less the descriptor reading it).
func readProc(p *ProcessFigures) {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := bytes.Fields(b); len(f) > 1 {
			if pages, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				p.RSS = pages * int64(os.Getpagesize())
			}
		}
	}
	if d, err := os.Open("/proc/self/fd"); err == nil {
		names, err := d.Readdirnames(-1)
		d.Close()
		if err == nil {
			p.FDs = len(names) - 1
		}
	}
}
