package main

import (
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture/stackfix"
)

// require STACK... makes a script that needs a real stack run only with
// HEALTHCTL_STACKS=1 (.ci/run's -race step): `go test ./...` alone skips it
// with one line naming the switch. With the switch on, a stack missing on a
// developer's machine skips with the command that installs it, and fails
// in CI (CI=true), where .ci/deps/*.sh installed it: a missing stack in CI
// is a broken install step, never a silent skip. STACK is a program
// (nginx, …), npm:DIR, the node_modules of testdata/stacks/DIR (npm ci
// there: node without them is a fresh clone's state, not a stack), or
// py:MOD[,MOD...], Python modules python3 must import. Basic tools (bash,
// curl, openssl, python3 itself) are not stacks: without the switch they
// run where installed and skip where not.
func init() {
	extraCmds["require"] = cmdRequire
	// testscript's TestScript has no Skip of its own: keep the script's T.
	extraSetup = append(extraSetup, func(env *testscript.Env) error {
		env.Values[scriptTKey{}] = env.T()
		return nil
	})
}

// scriptTKey is the Env.Values key of the script's testscript.T.
type scriptTKey struct{}

// stacksDir is testdata/stacks, seen from this package's directory.
var stacksDir = filepath.Join("..", "..", "testdata", "stacks")

// requireGate is the first of a require line's stacks that does not run
// here, said as stackfix.Gate says it ("" when all do), and whether that
// fails the script.
func requireGate(args []string) (string, bool) {
	for _, name := range args {
		if why, fail := stackfix.Gate(name, stacksDir); why != "" {
			return why, fail
		}
	}
	return "", false
}

func cmdRequire(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: require STACK...")
	}
	markGated(ts)
	if why, fail := requireGate(args); why != "" {
		if fail {
			ts.Fatalf("require: %s, and CI=%s (.ci/deps/*.sh must install it)", why, os.Getenv("CI"))
		}
		ts.Value(scriptTKey{}).(testscript.T).Skip("require: skipped: " + why)
	}
}
