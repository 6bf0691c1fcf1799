package main

import (
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
)

// require STACK... makes a script that needs a real stack skip on a
// developer's machine that lacks it, with one line naming the stack and the
// command that installs it, and fail in CI (CI=true), where .ci/deps/*.sh
// installed it: a missing stack in CI is a broken install step, never a
// silent skip. STACK is a program (nginx, /usr/bin/python3, …) or npm:DIR,
// the node_modules of testdata/stacks/DIR (npm ci there): node without
// them is a fresh clone's state, not a stack.
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

// requireLacks is the first of a require line's stacks missing here, said
// as fixture.Lacks says it ("" when none is).
func requireLacks(args []string) string {
	for _, name := range args {
		if why := fixture.Lacks(name, stacksDir); why != "" {
			return why
		}
	}
	return ""
}

func cmdRequire(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: require STACK...")
	}
	if why := requireLacks(args); why != "" {
		if ci := os.Getenv("CI"); ci != "" {
			ts.Fatalf("require: %s, and CI=%s (.ci/deps/*.sh must install it)", why, ci)
		}
		ts.Value(scriptTKey{}).(testscript.T).Skip("require: skipped outside CI: " + why)
	}
}
