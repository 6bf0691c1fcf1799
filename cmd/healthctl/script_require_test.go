package main

import (
	"os"
	"os/exec"

	"github.com/rogpeppe/go-internal/testscript"
)

// require PROGRAM... makes a script that needs a real stack (nginx, gunicorn,
// node, …) fail in CI (CI=true), where .ci/deps/*.sh installed it: a missing
// stack in CI is a broken install step, never a silent skip. On a developer's
// machine that lacks one it only logs; the script follows it with
// `[!exec:PROGRAM] skip`.
func init() { extraCmds["require"] = cmdRequire }

func cmdRequire(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: require PROGRAM...")
	}
	for _, name := range args {
		if _, err := exec.LookPath(name); err != nil {
			if os.Getenv("CI") != "" {
				ts.Fatalf("require %s: not installed, and CI=%s (.ci/deps/*.sh must install it)", name, os.Getenv("CI"))
			}
			// testscript has no Skip for custom commands: the script's
			// next line, [!exec:PROGRAM] skip, skips it outside CI.
			ts.Logf("require %s: not installed (outside CI the script's [!exec:%s] skip skips it)", name, name)
		}
	}
}
