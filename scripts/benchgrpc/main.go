// Command benchgrpc is grpc-go's real health server on loopback, for
// scripts/bench-grpc.sh: benchgrpc -addr 127.0.0.1:PORT [-status S].
// It is the tests' fixture (internal/fixture/grpcsrv) as a process; it is
// never linked into healthctl.
package main

import (
	"os"

	"github.com/healthctl/healthctl/internal/fixture/grpcsrv"
)

func main() { os.Exit(grpcsrv.Main(os.Args[1:])) }
