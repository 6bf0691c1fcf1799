package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
)

// TestREADMECommands keeps the README and the reference in docs/ from
// rotting: every healthctl command line in them (fenced blocks, inline code,
// Dockerfile and Kubernetes JSON arrays, cron and systemd lines) must name a
// real command and parse with its real flags — an unknown flag, a bad
// duration or a removed command fails here. What the commands then do is
// the scripts' job (testdata/script/readme_*.txtar run the guides' examples
// end to end).
func TestREADMECommands(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md found")
	}
	total := 0
	for _, file := range append([]string{"../../README.md"}, docs...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cmds := readmeCommands(string(b))
		total += len(cmds)
		for _, c := range cmds {
			if err := parseOnly(c.args); err != nil {
				t.Errorf("%s:%d: healthctl %s\n\t%v", file, c.line, strings.Join(c.args, " "), err)
			}
		}
		t.Logf("%s: %d command lines parse", file, len(cmds))
	}
	// The sanity check is on the total: a page may rightly hold no command
	// (benchmarks, outcomes), but the whole set holding few means the
	// extractor is broken.
	if total < 30 {
		t.Fatalf("only %d healthctl command lines found in README.md and docs/*.md; the extractor is broken", total)
	}
}

type docCommand struct {
	line int
	args []string
}

var (
	// A shell-style invocation: healthctl (maybe with a path) then a word.
	shellCmd = regexp.MustCompile(`(?:^|[\s'"=(/])(?:\./|/usr/local/bin/|/)?healthctl\s+([a-z-]+.*)$`)
	// A JSON/YAML array invocation: ["/healthctl", "probe", ...].
	arrayCmd = regexp.MustCompile(`\[\s*"(?:/usr/local/bin/|/|\./)?healthctl"\s*,[^\]]*\]`)
	inline   = regexp.MustCompile("`((?:\\./)?healthctl [^`]+)`")
)

// readmeCommands extracts healthctl invocations from markdown or YAML text.
func readmeCommands(doc string) []docCommand {
	var out []docCommand
	lines := strings.Split(doc, "\n")
	inFence, console := false, false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") {
			inFence = !inFence
			console = inFence && strings.TrimPrefix(t, "```") == "console"
			continue
		}
		if console && !strings.HasPrefix(l, "$ ") {
			continue // a program's output, not a command
		}
		n := i + 1
		if m := arrayCmd.FindString(l); m != "" {
			var arr []string
			if json.Unmarshal([]byte(m), &arr) == nil && len(arr) > 1 {
				out = append(out, docCommand{n, arr[1:]})
			}
			continue
		}
		if !inFence {
			for _, m := range inline.FindAllStringSubmatch(l, -1) {
				if args, ok := shellWords(strings.TrimPrefix(strings.TrimPrefix(m[1], "./"), "healthctl ")); ok {
					out = append(out, docCommand{n, args})
				}
			}
			continue
		}
		m := shellCmd.FindStringSubmatch(l)
		if m == nil || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		text := m[1]
		for strings.HasSuffix(strings.TrimSpace(text), `\`) && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(strings.TrimSpace(text), `\`) + " " + strings.TrimSpace(lines[i])
		}
		if args, ok := shellWords(text); ok {
			out = append(out, docCommand{n, args})
		}
	}
	return out
}

// shellWords splits a command line the way sh would, stopping at an
// operator or a comment, with variables and GitHub expressions replaced by
// a plausible value. Synopses (`[flags]`, `URL...`) are not commands.
func shellWords(s string) ([]string, bool) {
	s = regexp.MustCompile(`\$\{\{[^}]*\}\}`).ReplaceAllString(s, "1")
	if strings.Contains(s, "[flags]") || strings.Contains(s, "...") || strings.Contains(s, "URL…") {
		return nil, false
	}
	var words []string
	var cur strings.Builder
	have := false
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '\'' || quote == '"' && c != '$':
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, have = c, true
		case c == ' ' || c == '\t':
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		case c == '#' && !have:
			return words, true
		case strings.IndexByte("|;&><", c) >= 0 && !have:
			return words, true
		case c == '$':
			// $VAR, ${VAR}, $(cmd): a value the shell would fill in.
			j := i + 1
			if j < len(s) && (s[j] == '{' || s[j] == '(') {
				end := strings.IndexAny(s[j:], "})")
				if end < 0 {
					return nil, false
				}
				j += end + 1
			} else {
				for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
					j++
				}
			}
			cur.WriteString("1")
			have = true
			i = j - 1
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words, quote == 0
}

// parseOnly resolves the command and parses its flags, running nothing.
func parseOnly(args []string) error {
	streams, _, _ := output.Test(false)
	a := testFactory(streams, func(string) string { return "" })
	root := newRoot(a, nil)
	if len(args) > 0 && args[0] == "completion" {
		return nil // cobra adds it while executing
	}
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if dash := indexOf(rest, "--"); dash >= 0 {
		rest = rest[:dash]
	}
	return cmd.ParseFlags(rest)
}

func indexOf(s []string, w string) int {
	for i, x := range s {
		if x == w {
			return i
		}
	}
	return -1
}

func TestShellWords(t *testing.T) {
	for in, want := range map[string]string{
		`probe -v http://x/ # comment`:                                        "probe|-v|http://x/",
		`wait-healthy --timeout 120s $URL && gh pr`:                           "wait-healthy|--timeout|120s|1",
		`watch --on-redeploy 'echo "a b"' x > /dev/null`:                      `watch|--on-redeploy|echo "a b"|x`,
		`probe https://preview-${{ github.event.number }}.example.com/health`: "probe|https://preview-1.example.com/health",
	} {
		got, ok := shellWords(in)
		if !ok || strings.Join(got, "|") != want {
			t.Errorf("%q: got %q %v", in, got, ok)
		}
	}
}

func TestREADMECheckCanFail(t *testing.T) {
	doc := "```sh\nhealthctl probe --conect-timeout 2s http://x/\nhealthctl wait-healthy --timeout soon http://x/\nhealthctl wach --once\n```\n" +
		"Run `healthctl probe --no-such http://x/` or\n" + `HEALTHCHECK CMD ["/healthctl", "probe", "--max-time", "4"]` + "\n"
	cmds := readmeCommands(doc)
	if len(cmds) != 5 {
		t.Fatalf("found %d commands, want 5: %v", len(cmds), cmds)
	}
	for _, c := range cmds {
		if parseOnly(c.args) == nil {
			t.Errorf("line %d: %q parsed, want an error", c.line, c.args)
		}
	}
}

func TestREADMEConsoleOutputIsNotACommand(t *testing.T) {
	doc := "```console\n$ healthctl probe -v http://x/\n  cert[0]    CN=healthctl fixture expired\n```\n"
	if cmds := readmeCommands(doc); len(cmds) != 1 || cmds[0].args[0] != "probe" {
		t.Fatalf("got %v", cmds)
	}
}

// TestREADMEExitCodeTable checks the exit-code table of the README (and its
// copy in docs/outcomes.md) against the code: each outcome row's code is
// ExitCode's, its reasons are exactly the classifier's reasons of that
// outcome, and every other exit code of exit.go has its row.
func TestREADMEExitCodeTable(t *testing.T) {
	others := map[string][]int{
		"usage":          {exitcode.Usage},
		"`drain-test`":   {exitcode.DrainFailed},
		"`watch --once`": {exitcode.Redeploy},
		"internal error": {exitcode.Internal},
		"`wait-healthy":  {exitcode.CannotExecute, exitcode.NotFound},
		"interrupted":    {exitcode.SIGINT, exitcode.SIGQUIT, exitcode.SIGTERM},
	}
	reasonRE := regexp.MustCompile("`([a-z_]+)`")
	for _, file := range []string{"../../README.md", "../../docs/outcomes.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(b), "| exit | meaning | reasons |\n| --- | --- | --- |\n")
		if !ok {
			t.Fatalf("%s: no exit-code table", file)
		}
		section, _, _ = strings.Cut(section, "\n\n")
		seenOutcome := map[classify.Outcome]bool{}
		seenOther := map[string]bool{}
		for _, row := range strings.Split(section, "\n") {
			cols := strings.Split(strings.Trim(row, "| "), " | ")
			if len(cols) < 2 {
				t.Errorf("%s: malformed row %q", file, row)
				continue
			}
			var codes []int
			for _, f := range strings.Split(cols[0], " / ") {
				n, err := strconv.Atoi(f)
				if err != nil {
					t.Errorf("%s: row %q: exit %q", file, row, cols[0])
				}
				codes = append(codes, n)
			}
			if o, _, isOutcome := strings.Cut(strings.TrimPrefix(cols[1], "`"), "`:"); isOutcome && slices.Contains(classify.Outcomes, classify.Outcome(o)) {
				out := classify.Outcome(o)
				seenOutcome[out] = true
				if len(codes) != 1 || codes[0] != exitcode.ForOutcome(out) {
					t.Errorf("%s: %s: table says exit %v, ExitCode says %d", file, out, codes, exitcode.ForOutcome(out))
				}
				var got, want []string
				if len(cols) > 2 {
					for _, m := range reasonRE.FindAllStringSubmatch(cols[2], -1) {
						got = append(got, m[1])
					}
				}
				for _, r := range classify.Reasons {
					if r.Outcome() == out {
						want = append(want, string(r))
					}
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s: %s: table lists reasons %v, the classifier has %v", file, out, got, want)
				}
				continue
			}
			matched := false
			for prefix, want := range others {
				if strings.HasPrefix(cols[1], prefix) {
					matched, seenOther[prefix] = true, true
					if !slices.Equal(codes, want) {
						t.Errorf("%s: %q row: table says exit %v, exit.go says %v", file, prefix, codes, want)
					}
				}
			}
			if !matched {
				t.Errorf("%s: row for exit %v is neither an outcome nor a known exit code", file, codes)
			}
		}
		for _, o := range classify.Outcomes {
			if !seenOutcome[o] {
				t.Errorf("%s: no row for outcome %s", file, o)
			}
		}
		for prefix := range others {
			if !seenOther[prefix] {
				t.Errorf("%s: no row for %q", file, prefix)
			}
		}
	}
}
