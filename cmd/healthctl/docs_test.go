package main

// Doc claims the code can check (TestREADMECommands parses the command
// lines; these check what the prose around them says): every flag a page
// names exists on the command the page or the line is about, every default
// it quotes is the flag's default, every JSON field it quotes is one the
// code emits, every exit code it names is one of internal/exitcode, and
// every error line it quotes after a `$ healthctl …` is what that command
// prints (golden, run in-process; nothing is probed: each is a usage error).

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/demo"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
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

// refusedFlags is a line saying the flags it names are refused.
var refusedFlags = regexp.MustCompile(`\b(are|is) refused\b`)

// TestDocsFlagsExist: a flag named in prose exists on the command the line
// names, else on the command the page is about, else on some command.
func TestDocsFlagsExist(t *testing.T) {
	besideScripts(t)
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
					if !found && refusedFlags.MatchString(line) && docCommandFlag(t, "probe", name) != nil {
						// "… are refused (exit 2, naming the flag)": a
						// probe flag the command says it does not take.
						found = true
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

var (
	// `--flag[ ARG]` (VALUE…): a default quoted in prose.
	proseDefault = regexp.MustCompile("`--([a-z][a-z0-9-]*)(?: [A-Z]+)?` \\(([^)]*)\\)")
	// The value a default starts with: a number, duration or size, or a
	// word in capitals (a signal's name).
	defaultValue = regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]+)?(?: ?(?:ns|us|ms|s|m|h|KiB|MiB|GiB|kB|MB|GB))?|[A-Z]+)(?:[ ,]|$)`)
)

// sameDefault says whether a default quoted in the docs is the flag's.
func sameDefault(doc, def string) bool {
	doc = strings.ReplaceAll(strings.TrimSpace(doc), " ", "")
	if a, err := time.ParseDuration(doc); err == nil {
		if b, err := time.ParseDuration(def); err == nil {
			return a == b
		}
	}
	if a, err := strconv.ParseFloat(doc, 64); err == nil {
		b, err := strconv.ParseFloat(def, 64)
		return err == nil && a == b
	}
	return strings.EqualFold(doc, def)
}

// TestDocsDefaults: a default the docs quote — "`--grace` (2m)" in prose,
// or the default column of a flag table — is the flag's default on every
// command the line or page is about that has the flag.
func TestDocsDefaults(t *testing.T) {
	checked := 0
	check := func(file string, line int, text, name, value string) {
		cmds := lineCommands(text)
		if len(cmds) == 0 {
			cmds = pageCommands(file)
		}
		if len(cmds) == 0 {
			cmds = commandNames
		}
		has := false
		for _, c := range cmds {
			f := docCommandFlag(t, c, name)
			if f == nil {
				continue
			}
			has = true
			if !sameDefault(value, f.DefValue) {
				t.Errorf("%s:%d: the docs say --%s defaults to %q; %s's default is %q", file, line, name, value, c, f.DefValue)
			}
		}
		if !has {
			t.Errorf("%s:%d: --%s (default %q): a flag of none of %v", file, line, name, value, cmds)
		}
		checked++
	}
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		defaultCol := -1
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "|") {
				cols := strings.Split(strings.Trim(line, "| "), " | ")
				if strings.HasPrefix(line, "| flag |") {
					defaultCol = slices.Index(cols, "default")
					continue
				}
				if defaultCol > 0 && len(cols) > defaultCol {
					def := codeSpan.FindStringSubmatch(cols[defaultCol])
					for _, m := range codeSpan.FindAllStringSubmatch(cols[0], -1) {
						if name, ok := strings.CutPrefix(strings.Fields(m[1])[0], "--"); ok && def != nil && defaultValue.MatchString(def[1]) {
							check(file, i+1, line, name, def[1])
						}
					}
				}
				continue
			}
			defaultCol = -1
			for _, m := range proseDefault.FindAllStringSubmatch(line, -1) {
				v := strings.TrimPrefix(strings.TrimPrefix(m[2], "default "), "default: ")
				if dv := defaultValue.FindString(v); dv != "" {
					check(file, i+1, line, m[1], strings.TrimRight(dv, " ,"))
				}
			}
		}
	}
	t.Logf("%d quoted defaults checked", checked)
	if checked < 15 {
		t.Fatalf("only %d defaults found in the docs: the extractor is broken", checked)
	}
}

// emittedNames are the names healthctl's code can write or read: every
// JSON and YAML tag and every string literal of the shipped Go source (a
// hand-written JSON key, an event or reason name, a metric's name), names
// made of a literal prefix ("keepalive_" + kind, "cert_days%s"), and the
// targets file's keys (a probe flag's name with _ for -).
func emittedNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	var prefixes []string
	lit := regexp.MustCompile(`(?:json|yaml):"([a-z0-9_]+)|"([a-zA-Z0-9_]+)"|"([a-z0-9_]+)%`)
	for _, dir := range []string{"../../internal", "."} {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") ||
				strings.Contains(p, "internal/fixture") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range lit.FindAllStringSubmatch(string(b), -1) {
				if m[3] != "" {
					prefixes = append(prefixes, m[3])
					continue
				}
				names[m[1]+m[2]] = true
				if strings.HasSuffix(m[2], "_") {
					prefixes = append(prefixes, m[2])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for n := range names {
		for _, p := range prefixes {
			names[p+n] = true
		}
	}
	for _, p := range prefixes {
		names[p] = true
	}
	for _, c := range commandNames {
		streams, _, _ := output.Test(false)
		root := newRoot(testFactory(streams, func(string) string { return "" }), []string{c})
		cmd, _, _ := root.Find([]string{c})
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names[strings.ReplaceAll(f.Name, "-", "_")] = true })
	}
	return names
}

// notOurs are snake_case names the docs quote that are other programs'
// (Prometheus, blackbox_exporter, Compose, proxies' variables), examples of
// the user's own (secret names) or generated from a pattern (Nagios labels
// time_N).
var notOurs = map[string]bool{
	"metric_relabel_configs": true, "probe_success": true, "probe_duration_seconds": true,
	"probe_http_status_code": true, "probe_ssl_earliest_cert_expiry": true, "probe_input_sources": true,
	"go_goroutines": true, "process_open_fds": true, "process_resident_memory_bytes": true,
	"stop_grace_period": true, "stop_signal": true, "http_proxy": true, "https_proxy": true,
	"access_token": true, "api_key": true, "time_1": true, "time_2": true,
	"ru_maxrss": true, // getrusage(2)'s field, in benchmarks.md
	// PostgreSQL settings, in kinds.md and outcomes.md.
	"pg_isready": true, "hot_standby": true, "max_connections": true, "application_name": true, "replica_serve_stale_data": true,
	// PgBouncer's settings, in kinds.md.
	"server_login_retry": true, "query_wait_timeout": true,
	// Compose's healthcheck keys, in kinds.md.
	"start_period": true, "start_interval": true, "service_healthy": true, "depends_on": true,
}

// TestDocsJSONNames: every JSON key the docs quote ("name": in an example)
// and every snake_case name in a code span is one the code writes (or a
// script's name, or another program's).
func TestDocsJSONNames(t *testing.T) {
	names := emittedNames(t)
	scripts, err := filepath.Glob("../../testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		names[strings.TrimSuffix(filepath.Base(s), ".txtar")] = true
	}
	key := regexp.MustCompile(`"([a-z][a-z0-9_]*)":`)
	snake := regexp.MustCompile("`([a-z][a-z0-9]*_[a-z0-9_]+)`")
	// Keys that are data, not field names: watch's targets by name in the
	// examples, and the --expect-json examples' documents.
	data := map[string]bool{"api": true, "banana": true, "bad": true, "db": true, "web": true, "checkout": true, "billing": true}
	checked := 0
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			var found []string
			for _, m := range key.FindAllStringSubmatch(line, -1) {
				if !data[m[1]] {
					found = append(found, m[1])
				}
			}
			for _, m := range snake.FindAllStringSubmatch(line, -1) {
				found = append(found, m[1])
			}
			for _, n := range found {
				checked++
				if !names[n] && !notOurs[n] {
					t.Errorf("%s:%d: %q: no JSON field, event, reason or metric of that name in the code", file, i+1, n)
				}
			}
		}
	}
	t.Logf("%d quoted names checked", checked)
	if checked < 100 {
		t.Fatalf("only %d names found in the docs: the extractor is broken", checked)
	}
}

// consoleBlock is one `$ command` of a console block and the lines it is
// shown printing.
type consoleBlock struct {
	file string
	line int
	cmd  string
	out  []string
}

func consoleBlocks(t *testing.T) []consoleBlock {
	t.Helper()
	var blocks []consoleBlock
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
				continue
			}
			switch {
			case !inFence:
			case strings.HasPrefix(line, "$ "):
				blocks = append(blocks, consoleBlock{file: file, line: i + 1, cmd: strings.TrimPrefix(line, "$ ")})
			case len(blocks) > 0 && blocks[len(blocks)-1].file == file && blocks[len(blocks)-1].line+len(blocks[len(blocks)-1].out) == i:
				// (The same file's: a block that ends a file must not
				// take the next file's fenced lines that happen to
				// follow its line number.)
				blocks[len(blocks)-1].out = append(blocks[len(blocks)-1].out, line)
			}
		}
	}
	return blocks
}

// shape keeps what a doc's output line promises and drops what changes
// from run to run: digits, the length of a waterfall bar, runs of spaces.
func shape(s string) string {
	s = regexp.MustCompile(`[0-9]+`).ReplaceAllString(s, "0")
	s = regexp.MustCompile(`=+`).ReplaceAllString(s, "=")
	s = regexp.MustCompile(`─+`).ReplaceAllString(s, "─")
	return strings.Join(strings.Fields(s), " ")
}

// runDoc runs a doc's command line in-process in dir: its leading VAR=value
// words are its environment; nothing else of the test's environment is.
func runDoc(t *testing.T, dir, line string, tty bool, width int, extraEnv ...string) (stdout, stderr string) {
	t.Helper()
	words, ok := shellWords(strings.SplitN(line, "  #", 2)[0])
	if !ok {
		t.Fatalf("cannot split %q", line)
	}
	env := map[string]string{"HEALTHCTL_CONFIG": os.DevNull}
	for i := 0; i+1 < len(extraEnv); i += 2 {
		env[extraEnv[i]] = extraEnv[i+1]
	}
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		k, v, _ := strings.Cut(words[0], "=")
		env[k] = v
		words = words[1:]
	}
	if len(words) == 0 || words[0] != "healthctl" {
		t.Fatalf("not a healthctl command: %q", line)
	}
	if slices.Contains(words, "--config") {
		delete(env, "HEALTHCTL_CONFIG")
	}
	t.Chdir(dir)
	streams, out, errb := output.Test(tty)
	streams.OutWidth, streams.OutColor, streams.ErrColor = width, false, false
	f := testFactory(streams, func(k string) string { return env[k] })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run(ctx, f, words[1:])
	return out.String(), errb.String()
}

// TestDocsOutputLines is the golden test of the output the docs quote:
// every error line shown after a `$ healthctl …` is exactly what that
// command prints; the demo's expired-certificate probe, a refused probe
// and the policy table print the lines shown, digits and bar lengths aside.
func TestDocsOutputLines(t *testing.T) {
	// The files the quoted commands name.
	dir := t.TempDir()
	for name, content := range map[string]string{
		"ci.yaml": "conect-timeout: 1s\n",
		// docs/drain-test.md's lint example: an app that does not
		// pre-drain itself (no PRE_DRAIN_MS: the default P), the preStop
		// on line 21.
		"deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 40
      containers:
        - name: app
          image: example/app
          ports:
            - containerPort: 8080
          env:
            - {name: PORT, value: "8080"}
            - {name: SHUTDOWN_TIMEOUT_MS, value: "20000"}
          readinessProbe:
            httpGet: {path: /ready, port: 8080}
          lifecycle:
            preStop:
              exec: {command: ["sleep", "2"]}
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lab, err := demo.Start(demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	var expired demo.Service
	for _, s := range lab.Services {
		if strings.Contains(s.Name, "expired") {
			expired = s
		}
	}
	closed := lab.Services[3]
	if closed.Name != "nothing listens" {
		t.Fatalf("service 3 is %q", closed.Name)
	}
	// watch's example: api serves, billing refuses; --all-addresses's:
	// two4.invalid is 127.0.0.2 (nothing listens) then 127.0.0.1.
	dns, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	api, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	billing, err := fixture.NewClosedPort(t)
	if err != nil {
		t.Fatal(err)
	}
	targets := "targets:\n  - name: api\n    url: " + api.URL + "/health\n  - name: billing\n    url: " + billing.URL() + "/health\n"
	if err := os.WriteFile(filepath.Join(dir, "targets.yaml"), []byte(targets), 0o644); err != nil {
		t.Fatal(err)
	}

	checked := 0
	for _, b := range consoleBlocks(t) {
		where := b.file + ":" + strconv.Itoa(b.line)
		switch {
		case len(b.out) > 0 && strings.HasPrefix(b.out[0], "healthctl: "):
			_, stderr := runDoc(t, dir, b.cmd, false, 0)
			if want := strings.Join(b.out, "\n") + "\n"; stderr != want {
				t.Errorf("%s: $ %s\n  the docs show: %s  it prints:      %s", where, b.cmd, want, stderr)
			}
		case strings.HasPrefix(b.cmd, "healthctl probe -v --cacert ca.pem https://127.0.0.1:"):
			// The demo's expired-certificate service, as the docs say.
			stdout, _ := runDoc(t, dir, "healthctl probe -v --cacert "+lab.CAFile+" "+expired.URL, false, 0)
			compareShapes(t, where, b.out, stdout)
		case regexp.MustCompile(`^healthctl probe http://127\.0\.0\.1:[0-9]+/health$`).MatchString(b.cmd) &&
			len(b.out) > 0 && strings.Contains(b.out[0], " refused "):
			stdout, _ := runDoc(t, dir, "healthctl probe "+closed.URL, false, 0)
			compareShapes(t, where, b.out, stdout)
		case b.cmd == "healthctl drain-test --manifest deploy.yaml":
			stdout, _ := runDoc(t, dir, b.cmd, false, 0)
			if want := strings.Join(b.out, "\n") + "\n"; stdout != want {
				t.Errorf("%s: $ %s\n  the docs show:\n%s  it prints:\n%s", where, b.cmd, want, stdout)
			}
		case strings.HasPrefix(b.cmd, "healthctl probe --all-addresses http://two4.invalid:"):
			stdout, _ := runDoc(t, dir, "healthctl probe --all-addresses http://two4.invalid:"+strconv.Itoa(api.Port)+"/health", false, 0,
				"HEALTHCTL_DNS_SERVER", dns.Addr)
			compareShapes(t, where, b.out, stdout)
		case strings.HasPrefix(b.cmd, "healthctl watch --once --state state.json ") && strings.HasSuffix(b.cmd, " --targets targets.yaml -o text"):
			// A terminal: the table drawn.
			stdout, _ := runDoc(t, dir, b.cmd, true, 100)
			compareShapes(t, where, b.out, stdout)
		case strings.HasPrefix(b.cmd, "healthctl policy "):
			// On a 100-column terminal, as the page says; "..." stands
			// for rows left out.
			stdout, _ := runDoc(t, dir, b.cmd, true, 100)
			got := strings.Split(stdout, "\n")
			at := 0
			for _, want := range b.out {
				if want == "..." {
					continue
				}
				i := slices.Index(got[at:], want)
				if i < 0 {
					t.Errorf("%s: $ %s: the docs show %q; it does not print it (in this order):\n%s", where, b.cmd, want, stdout)
					break
				}
				at += i + 1
			}
		default:
			t.Logf("%s: $ %s: not checked (a real nginx of its own)", where, b.cmd)
			continue
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d console blocks checked", checked)
	}
}

// compareShapes compares a doc's output lines with a run's, shape for
// shape.
func compareShapes(t *testing.T, where string, doc []string, out string) {
	t.Helper()
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(got) != len(doc) {
		t.Errorf("%s: the docs show %d lines, it prints %d:\n%s", where, len(doc), len(got), out)
	}
	for i := 0; i < len(doc) && i < len(got); i++ {
		if shape(doc[i]) != shape(got[i]) {
			t.Errorf("%s: line %d\n  the docs show: %s\n  it prints:      %s", where, i+1, doc[i], got[i])
		}
	}
}

// TestDocsExitCodes: every exit code the docs name ("exit 8", "exits 2",
// "exit 130/143", "exit code 5") is one of internal/exitcode's, except
// where the line is about a service's own exit status or a Nagios state.
func TestDocsExitCodes(t *testing.T) {
	known := map[int]bool{}
	for _, c := range []int{exitcode.Pass, exitcode.Unreachable, exitcode.Usage, exitcode.TLS, exitcode.Timeout,
		exitcode.Refused, exitcode.DNS, exitcode.DrainFailed, exitcode.Redeploy, exitcode.Unknown, exitcode.Internal, exitcode.IOError,
		exitcode.CannotExecute, exitcode.NotFound, exitcode.SIGINT, exitcode.SIGQUIT, exitcode.SIGTERM, exitcode.SIGPIPE, exitcode.Degraded} {
		known[c] = true
	}
	mention := regexp.MustCompile(`\bexit(?:s| code| codes)? ([0-9]+(?: ?/ ?[0-9]+)*)\b`)
	// A service's, a hook's or a shell's own status, not healthctl's.
	theirs := regexp.MustCompile(`exit status|the service|the process exits|service that|CMD's|its own status|hook|shell|sh -c|node|python`)
	checked := 0
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range mention.FindAllStringSubmatch(line, -1) {
				for _, f := range strings.Split(m[1], "/") {
					n, _ := strconv.Atoi(strings.TrimSpace(f))
					checked++
					if !known[n] && !theirs.MatchString(line) {
						t.Errorf("%s:%d: %q: %d is no exit code of internal/exitcode", file, i+1, m[0], n)
					}
				}
			}
		}
	}
	// "the exit code says the same (3: tls)": the code is the outcome's.
	pair := regexp.MustCompile(`\(([0-9]+): ([a-z]+)\)`)
	for _, file := range docFiles(t) {
		b, _ := os.ReadFile(file)
		for _, m := range pair.FindAllStringSubmatch(string(b), -1) {
			n, _ := strconv.Atoi(m[1])
			if o := classify.Outcome(m[2]); slices.Contains(classify.Outcomes, o) {
				checked++
				if exitcode.ForOutcome(o) != n {
					t.Errorf("%s: %q: %s exits %d", file, m[0], o, exitcode.ForOutcome(o))
				}
			}
		}
	}
	t.Logf("%d exit codes named in the docs checked", checked)
	if checked < 40 {
		t.Fatalf("only %d exit codes found in the docs: the extractor is broken", checked)
	}
}

// TestDocsCounts: the counts docs/reliability.md gives of the suite (exit-2
// runs, the scripts they are in, fuzz targets) are never more than the suite
// has (more scripts may come; a count that shrank is a claim gone false).
func TestDocsCounts(t *testing.T) {
	b, err := os.ReadFile("../../docs/reliability.md")
	if err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Glob("../../testdata/script/*.txtar")
	runs, inScripts := 0, 0
	for _, s := range scripts {
		data, _ := os.ReadFile(s)
		n := len(regexp.MustCompile(`(?m)^exitcode 2 `).FindAll(data, -1))
		runs += n
		if n > 0 {
			inScripts++
		}
	}
	fuzz := 0
	filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "_test.go") {
			data, _ := os.ReadFile(p)
			fuzz += len(regexp.MustCompile(`(?m)^func Fuzz`).FindAll(data, -1))
		}
		return nil
	})
	claims := regexp.MustCompile(`(\d+) (?:exit-2 )?runs in (\d+) scripts(?: assert exit 2|, plus (\d+) fuzz targets)`).FindAllStringSubmatch(string(b), -1)
	if len(claims) < 2 {
		t.Fatalf("found %d claims of counts in docs/reliability.md", len(claims))
	}
	for _, c := range claims {
		r, _ := strconv.Atoi(c[1])
		s, _ := strconv.Atoi(c[2])
		if r > runs || s > inScripts {
			t.Errorf("docs/reliability.md: %q, but the scripts have %d exit-2 runs in %d scripts", c[0], runs, inScripts)
		}
		if c[3] != "" {
			if f, _ := strconv.Atoi(c[3]); f > fuzz {
				t.Errorf("docs/reliability.md: %q, but there are %d fuzz targets", c[0], fuzz)
			}
		}
	}
}

// TestDocsForUsersOnly: the README and docs/ are for users; they cite no
// document of the team's (the contract, the style guide, the issue
// tracker). An upstream project's issue is named with its project
// ("blackbox_exporter issue 904").
func TestDocsForUsersOnly(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "..", "README.md"))
	internal := regexp.MustCompile(`\bSPEC(\.md)?\b|\.\./shared|\bGOTCHAS\b|\bSTYLE\.md\b`)
	issue := regexp.MustCompile(`(?i)\bissues?\s+#?\d+`)
	upstream := []string{"blackbox", "blackbox_exporter", "seaweedfs", "grpc-go", "go", "golang", "curl", "kubernetes", "prometheus", "nginx"}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := internal.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, a document users do not have", filepath.Base(p), i+1, m)
			}
			for _, at := range issue.FindAllStringIndex(line, -1) {
				before := line[:at[0]]
				project := ""
				if w := strings.Fields(before); len(w) > 0 && strings.HasSuffix(before, " ") {
					project = strings.ToLower(strings.Trim(w[len(w)-1], "(`*"))
				}
				if !slices.Contains(upstream, project) {
					t.Errorf("%s:%d cites %q: name the upstream project, or no issue at all", filepath.Base(p), i+1, line[at[0]:at[1]])
				}
			}
		}
	}
}
