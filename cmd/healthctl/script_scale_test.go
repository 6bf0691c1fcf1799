package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() { extraCmds["manytargets"] = cmdManyTargets }

// cmdManyTargets writes a targets file of N targets named t-0 … t-(N-1),
// each at its own path under BASE_URL:
//
//	manytargets FILE N BASE_URL
func cmdManyTargets(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "manytargets")
	if len(args) != 3 {
		ts.Fatalf("usage: manytargets FILE N BASE_URL")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 1 || n > 100000 {
		ts.Fatalf("manytargets: N %q: want 1..100000", args[1])
	}
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	w := bufio.NewWriter(f)
	w.WriteString("targets:\n")
	for i := range n {
		fmt.Fprintf(w, "  - name: t-%d\n    url: %s/t/%d\n", i, args[2], i)
	}
	ts.Check(w.Flush())
	ts.Check(f.Close())
}
