package main

// Doc claims the code can check (TestREADMECommands parses the command
// lines; these check what the prose around them says): every flag a page
// names exists on the command the page or the line is about, every default
// it quotes is the flag's default, every JSON field it quotes is one the
// code emits, every exit code it names is one of internal/exitcode, and
// every error line it quotes after a `$ healthctl …` is what that command
// prints (golden, run in-process; nothing is probed: each is a usage error).

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/output"
)

// docFiles are the pages whose claims are checked.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	return append([]string{"../../README.md"}, docs...)
}

// pageCommands are the commands a page is about (nil for the pages about
// all).
func pageCommands(file string) []string {
	switch name := strings.TrimSuffix(filepath.Base(file), ".md"); name {
	case "probe", "wait-healthy", "watch", "drain-test":
		return []string{name}
	case "policy":
		// The policy's settings are probe's and watch's flags too.
		return []string{"policy", "probe", "watch"}
	}
	return nil
}

// commandNames are healthctl's commands as the docs name them.
var commandNames = []string{"probe", "wait-healthy", "watch", "drain-test", "policy", "demo", "version"}

// docCommandFlag returns the flag named --name (or -n) of command cmd,
// persistent flags included, or nil.
func docCommandFlag(t *testing.T, cmd, name string) *pflag.Flag {
	t.Helper()
	streams, _, _ := output.Test(false)
	root := newRoot(testFactory(streams, func(string) string { return "" }), []string{cmd})
	c, _, err := root.Find([]string{cmd})
	if err != nil || c == root {
		t.Fatalf("no command %q: %v", cmd, err)
	}
	fs := c.Flags()
	fs.AddFlagSet(c.InheritedFlags())
	fs.AddFlagSet(rootOnlyFlags())
	if len(name) == 1 {
		return fs.ShorthandLookup(name)
	}
	return fs.Lookup(name)
}

// rootOnlyFlags are the root's own flags (--version), which only the full
// tree has.
func rootOnlyFlags() *pflag.FlagSet {
	streams, _, _ := output.Test(false)
	return newRoot(testFactory(streams, func(string) string { return "" }), nil).Flags()
}

// lineCommands are the healthctl commands a line of prose names: as
// `command` or `healthctl command …`.
func lineCommands(line string) []string {
	var out []string
	for _, c := range commandNames {
		q := regexp.QuoteMeta(c)
		if regexp.MustCompile("`" + q + "[` ]|healthctl " + q + `\b`).MatchString(line) {
			out = append(out, c)
		}
	}
	return out
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// A long flag; --expect-* and the like name a family, not a flag.
	longFlag = regexp.MustCompile(`(?:^|[\s(\[=/,])--([a-z][a-z0-9-]*[a-z0-9])(?:[^-*a-z0-9.]|$)`)
	// Other programs' flags, recognised by the program named on the line
	// (distinctive names anywhere; common words only where a code span
	// starts with them).
	otherProgram = regexp.MustCompile(`\b(curl|kubectl|docker|goreleaser|promtool|apt-get|npm|check_http|check_curl|wait4x|grpc_health_probe|hyperfine|systemd-run|nagios4?|gunicorn|uvicorn|nginx|node_exporter|prometheus|python3?|paired\.py|grpcurl|rpm|dpkg)\b|` + "`" + `(go|gh|ab|node|timeout|kill|sleep|unshare) `)
)

// TestDocsFlagsExist: a flag named in prose exists on the command the line
// names, else on the command the page is about, else on some command.
func TestDocsFlagsExist(t *testing.T) {
	checked := 0
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
				continue
			}
			if inFence || otherProgram.MatchString(line) || i > 0 && otherProgram.MatchString(lines[i-1]) {
				continue // command lines are TestREADMECommands' to parse
			}
			for _, span := range codeSpan.FindAllStringSubmatch(line, -1) {
				if strings.HasPrefix(span[1], "healthctl ") || otherProgram.MatchString(span[1]) {
					continue
				}
				for _, m := range longFlag.FindAllStringSubmatch(span[1], -1) {
					name := m[1]
					cmds := lineCommands(line)
					if len(cmds) == 0 {
						cmds = pageCommands(file)
					}
					found := false
					for _, c := range cmds {
						found = found || docCommandFlag(t, c, name) != nil
					}
					if !found && pageCommands(file) == nil {
						// A page about every command may name a
						// flag of a command the line does not.
						for _, c := range commandNames {
							found = found || docCommandFlag(t, c, name) != nil
						}
						cmds = commandNames
					}
					checked++
					if !found {
						t.Errorf("%s:%d: --%s is a flag of none of %v", file, i+1, name, cmds)
					}
				}
			}
		}
	}
	t.Logf("%d flags named in prose checked", checked)
	if checked < 100 {
		t.Fatalf("only %d flags found in the docs: the extractor is broken", checked)
	}
}
