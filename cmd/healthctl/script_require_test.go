package main

import (
	"os"
	"os/exec"

	"github.com/rogpeppe/go-internal/testscript"
)

// require PROGRAM... makes a script that needs a real stack (nginx, gunicorn,
// node, …) skip on a developer's machine that lacks one, and fail in CI
// (CI=true), where .ci/deps/*.sh installed it: a missing stack in CI is a
// broken install step, never a silent skip.
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

func cmdRequire(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: require PROGRAM...")
	}
	for _, name := range args {
		if _, err := exec.LookPath(name); err != nil {
			if os.Getenv("CI") != "" {
				ts.Fatalf("require %s: not installed, and CI=%s (.ci/deps/*.sh must install it)", name, os.Getenv("CI"))
			}
			ts.Value(scriptTKey{}).(testscript.T).Skip("require " + name + ": not installed (skipped outside CI)")
		}
	}
}
