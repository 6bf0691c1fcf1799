package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/output"
)

// action is the part of action.yml the test reads.
type action struct {
	Inputs map[string]struct {
		Default  string `yaml:"default"`
		Required bool   `yaml:"required"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			Name string            `yaml:"name"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

// TestActionYAML runs the GitHub Action's own wait step with bash against
// loopback fixtures, with the real healthctl, as a runner would (go env
// GOPATH answered by a stand-in go): its inputs are real wait-healthy flags,
// URLs split on spaces and newlines, extra args one word a line, fail-open.
func TestActionYAML(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" || !a.Inputs["url"].Required {
		t.Fatalf("runs.using %q, url required %v", a.Runs.Using, a.Inputs["url"].Required)
	}
	streams, _, _ := output.Test(false)
	root := newRoot(testFactory(streams, func(string) string { return "" }), nil)
	wait, _, err := root.Find([]string{"wait-healthy"})
	if err != nil {
		t.Fatal(err)
	}
	for name := range a.Inputs {
		switch name {
		case "url", "version", "args":
			continue
		}
		if wait.Flags().Lookup(name) == nil {
			t.Errorf("input %q is not a wait-healthy flag", name)
		}
	}
	var script string
	var env map[string]string
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Run, "wait-healthy") {
			script, env = s.Run, s.Env
		}
	}
	if script == "" {
		t.Fatal("no step runs wait-healthy")
	}

	// A stand-in `go env GOPATH` and the real healthctl in GOPATH/bin.
	hc, err := exec.LookPath("healthctl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gopath := filepath.Join(dir, "gopath")
	os.MkdirAll(filepath.Join(gopath, "bin"), 0o755)
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	if err := os.Symlink(hc, filepath.Join(gopath, "bin", "healthctl")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "bin", "go"), []byte("#!/bin/sh\n[ \"$1 $2\" = \"env GOPATH\" ] && echo "+gopath+"\n"), 0o755)

	up, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Body: "ok ready"})
	if err != nil {
		t.Fatal(err)
	}
	closed, err := fixture.NewClosedPort(t)
	if err != nil {
		t.Fatal(err)
	}
	expr := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`)
	run := func(inputs map[string]string) (string, int) {
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"), "HEALTHCTL_DNS_SERVER=127.0.0.1:9")
		for k, v := range env {
			m := expr.FindStringSubmatch(v)
			if m == nil {
				t.Fatalf("env %s=%q: want ${{ inputs.NAME }}", k, v)
			}
			val, ok := inputs[m[1]]
			if !ok {
				val = a.Inputs[m[1]].Default
			}
			cmd.Env = append(cmd.Env, k+"="+val)
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}

	out, code := run(map[string]string{"url": up.URL + "/a " + up.URL + "/b\n" + up.URL + "/c", "args": "--expect-body\nok ready\n"})
	if code != 0 || strings.Count(out, "PASS ok") != 3 {
		t.Errorf("three healthy URLs: exit %d\n%s", code, out)
	}
	out, code = run(map[string]string{"url": closed.URL() + "/health", "timeout": "300ms"})
	if code != exitcode.Refused || !strings.Contains(out, "conn_refused") {
		t.Errorf("refused: exit %d, want %d\n%s", code, exitcode.Refused, out)
	}
	out, code = run(map[string]string{"url": closed.URL() + "/health", "timeout": "300ms", "fail-open": "true"})
	if code != 0 || !strings.Contains(out, "WARN") {
		t.Errorf("fail-open: exit %d\n%s", code, out)
	}
	out, code = run(map[string]string{"url": up.URL + "/health", "timeout": "300ms", "args": "--expect-body\nnot there"})
	if code != exitcode.Unreachable {
		t.Errorf("condition: exit %d\n%s", code, out)
	}
}
