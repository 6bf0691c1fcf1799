package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli"
)

// reasonsFileVar names the file every healthctl run under TestScripts appends
// the reasons it printed to (one per line), so reason coverage counts what
// the binary actually emitted against real fixtures, not what script text
// claims.
const reasonsFileVar = "HCTEST_REASONS_FILE"

// printedReason finds a reason in what healthctl printed: a JSON object's
// "reason", or a text first line (PASS REASON URL … / FAIL OUTCOME REASON
// URL …).
var printedReason = regexp.MustCompile(`"reason":"([a-z_]+)"|(?m)^PASS ([a-z_]+) |(?m)^FAIL [a-z]+ ([a-z_]+) `)

// lockedBuffer is a buffer healthctl's goroutines may write to at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mainRecordingReasons runs healthctl like Main (configure as mainWith's)
// and, when $HCTEST_REASONS_FILE is set, appends the reasons it printed to
// that file.
func mainRecordingReasons(configure func(*cli.Factory)) int {
	file := os.Getenv(reasonsFileVar)
	if file == "" {
		return mainWith(configure)
	}
	// Opened before the run: a script may take the process's file
	// descriptors away while it runs (probe_unknown_local's prlimit).
	f, ferr := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if ferr == nil {
		defer f.Close()
	}
	var seen lockedBuffer
	code := mainWith(func(a *cli.Factory) {
		if configure != nil {
			configure(a)
		}
		a.Streams.Out = io.MultiWriter(a.Streams.Out, &seen)
		a.Streams.Err = io.MultiWriter(a.Streams.Err, &seen)
	})
	var lines strings.Builder
	for _, m := range printedReason.FindAllStringSubmatch(seen.String(), -1) {
		for _, r := range m[1:] {
			if r != "" {
				lines.WriteString(r + "\n")
			}
		}
	}
	if lines.Len() > 0 && ferr == nil {
		// One O_APPEND write per process: scripts run in parallel.
		f.WriteString(lines.String())
	}
	return code
}

// checkReasonCoverage runs after every script of TestScripts has finished.
// It fails for each reason (other than no_url, which only a targets file can
// produce) that no healthctl run printed, unless every script that asserts
// the reason was skipped for a condition this machine lacks: those are
// listed in the test output as skipped, never counted as covered.
func checkReasonCoverage(t *testing.T, file string, scriptsRun, scriptsTotal int, conds map[string]func() (bool, error)) {
	if scriptsRun < scriptsTotal {
		t.Logf("reason coverage not checked: %d of %d scripts ran (a -run filter)", scriptsRun, scriptsTotal)
		return
	}
	emitted := map[classify.Reason]bool{}
	if f, err := os.Open(file); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			emitted[classify.Reason(sc.Text())] = true
		}
		f.Close()
	}
	claims, skippedScripts := scriptClaims(t, conds)
	var skipped []string
	for _, r := range classify.Reasons {
		if r == classify.NoURL || emitted[r] {
			continue
		}
		scripts := claims[r]
		onlySkipped := len(scripts) > 0
		for _, s := range scripts {
			if _, skip := skippedScripts[s]; !skip {
				onlySkipped = false
			}
		}
		if onlySkipped {
			var why []string
			for _, s := range scripts {
				why = append(why, s+" ("+skippedScripts[s]+")")
			}
			skipped = append(skipped, fmt.Sprintf("%s: skipped, not covered on this machine: %s", r, strings.Join(why, ", ")))
			continue
		}
		t.Errorf("reason coverage: healthctl never printed reason %s during the scripts (asserted by %v); want a script that makes a real fixture produce it", r, scripts)
	}
	for _, line := range skipped {
		t.Logf("reason coverage: %s", line)
	}
	if len(skipped) > 0 {
		t.Logf("reason coverage: %d reason(s) not covered because their scripts were skipped (see above)", len(skipped))
	}
}

// scriptClaims returns, per reason, the scripts whose JSON assertions name
// it, and the scripts skipped on this machine and why: a `[!COND] skip`
// line (the condition), a require line or a fixture command whose stack is
// missing (outside CI).
func scriptClaims(t *testing.T, conds map[string]func() (bool, error)) (map[classify.Reason][]string, map[string]string) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	reasonRE := regexp.MustCompile(`"reason":"([a-z_]+)"`)
	skipRE := regexp.MustCompile(`^\s*\[!([^\]]+)\]\s*skip\b`)
	requireRE := regexp.MustCompile(`^\s*(?:\[[^\]]*\]\s*)?require\s+(.+)$`)
	claims := map[classify.Reason][]string{}
	skipped := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".txtar")
		for _, line := range scriptLines(string(data)) {
			if m := skipRE.FindStringSubmatch(line); m != nil && !holds(m[1], conds) {
				if _, done := skipped[name]; !done {
					skipped[name] = "no " + m[1]
				}
			}
			// A stack that does not run here (off, or missing outside CI) skips the script
			// at its require line.
			// So does a fixture command whose server is missing.
			stack := fixtureNeeds[firstWord(line)]
			if m := requireRE.FindStringSubmatch(line); m != nil {
				stack = strings.Fields(m[1])
			}
			if stack != nil {
				if why, _ := requireGate(stack); why != "" {
					if _, done := skipped[name]; !done {
						skipped[name] = why
					}
				}
			}
			for _, r := range reasonRE.FindAllStringSubmatch(line, -1) {
				if rs := claims[classify.Reason(r[1])]; !slices.Contains(rs, name) {
					claims[classify.Reason(r[1])] = append(rs, name)
				}
			}
			// A text line's reason (stdout '^FAIL unreachable
			// redis_loading …') is a claim too.
			if w := firstWord(line); w == "stdout" || w == "stderr" {
				for _, r := range classify.Reasons {
					if wordRE(string(r)).MatchString(line) && !slices.Contains(claims[r], name) {
						claims[r] = append(claims[r], name)
					}
				}
			}
		}
	}
	return claims, skipped
}

// fixtureNeeds are the script commands that run a real server, and the
// stack each needs (the command skips its script without it).
var fixtureNeeds = map[string][]string{"redisd": {"redis-server"}, "pgd": {"pg_isready"}, "mariadbd": {"mariadbd"}}

// wordRE matches w as a whole word (reasons hold only [a-z_]).
func wordRE(w string) *regexp.Regexp { return regexp.MustCompile(`(^|[^a-z_])` + w + `($|[^a-z_])`) }

// firstWord is a script line's command, after any [COND] prefixes.
func firstWord(line string) string {
	f := strings.Fields(line)
	for len(f) > 0 && strings.HasPrefix(f[0], "[") {
		f = f[1:]
	}
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// holds evaluates a script condition as testscript does: exec:PROG, or one
// of TestScripts' own.
func holds(cond string, conds map[string]func() (bool, error)) bool {
	if prog, ok := strings.CutPrefix(cond, "exec:"); ok {
		_, err := exec.LookPath(prog)
		return err == nil
	}
	if f, ok := conds[cond]; ok {
		ok, err := f()
		return err == nil && ok
	}
	return true
}

// scriptLines returns the script part of a txtar archive (before the first
// file marker).
func scriptLines(archive string) []string {
	var lines []string
	for _, l := range strings.Split(archive, "\n") {
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(strings.TrimSpace(l), " --") {
			break
		}
		lines = append(lines, l)
	}
	return lines
}

// TestReasonNamesAreDefined: every reason a script asserts is one classify
// defines (a typo would otherwise assert something never printed).
func TestReasonNamesAreDefined(t *testing.T) {
	claims, _ := scriptClaims(t, nil)
	for r, scripts := range claims {
		if !slices.Contains(classify.Reasons, r) {
			t.Errorf("scripts %v assert reason %q, which classify does not define", scripts, r)
		}
	}
}
