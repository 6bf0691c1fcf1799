package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"go.yaml.in/yaml/v3"
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
	cli.BareSecondsDurations(root) // as run does
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
		"Run `healthctl probe --no-such http://x/` or\n" + `HEALTHCHECK CMD ["/healthctl", "probe", "--max-time", "4x"]` + "\n"
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
		"usage":                     {exitcode.Usage},
		"`probe`: a degraded pass":  {exitcode.Degraded},
		"`drain-test`":              {exitcode.DrainFailed},
		"`watch --once`":            {exitcode.Redeploy},
		"internal error":            {exitcode.Internal},
		"healthctl could not write": {exitcode.IOError},
		"`wait-healthy":             {exitcode.CannotExecute, exitcode.NotFound},
		"any command whose stdout":  {exitcode.SIGPIPE},
		"interrupted":               {exitcode.SIGINT, exitcode.SIGQUIT, exitcode.SIGTERM},
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

// TestREADMEBuildsWhatItPromises: the Go version the README asks for is
// go.mod's go directive, and every build or install of healthctl it and
// docs/development.md show makes the static binary the README promises
// (CGO_ENABLED=0: otherwise Go links the C library's resolver).
func TestREADMEBuildsWhatItPromises(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	goVersion := string(m[1])
	for _, file := range []string{"../../README.md", "../../docs/development.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		for _, v := range regexp.MustCompile(`Go (1\.\d+(?:\.\d+)?)\+?`).FindAllStringSubmatch(doc, -1) {
			if v[1] != goVersion {
				t.Errorf("%s says Go %s, go.mod says go %s", file, v[1], goVersion)
			}
		}
		builds := 0
		for i, l := range strings.Split(doc, "\n") {
			if !regexp.MustCompile(`go (build|install)\b.*(\./cmd/healthctl|healthctl/cmd/healthctl)`).MatchString(l) {
				continue
			}
			builds++
			if !strings.Contains(l, "CGO_ENABLED=0") {
				t.Errorf("%s:%d: builds a dynamically linked healthctl (no CGO_ENABLED=0): %s", file, i+1, strings.TrimSpace(l))
			}
		}
		if builds == 0 {
			t.Errorf("%s shows no build of healthctl", file)
		}
	}
}

// The Kubernetes shapes the guides rely on, decoded strictly: a field in the
// wrong place (fsGroup on a container, args under the pod) fails, as the API
// server would reject it.
type (
	k8sObject struct {
		APIVersion string    `yaml:"apiVersion"`
		Kind       string    `yaml:"kind"`
		Metadata   k8sMeta   `yaml:"metadata"`
		Spec       yaml.Node `yaml:"spec"`
	}
	k8sMeta struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	}
	k8sCronJobSpec struct {
		Schedule                   string     `yaml:"schedule"`
		ConcurrencyPolicy          string     `yaml:"concurrencyPolicy"`
		StartingDeadlineSeconds    *int       `yaml:"startingDeadlineSeconds"`
		SuccessfulJobsHistoryLimit *int       `yaml:"successfulJobsHistoryLimit"`
		FailedJobsHistoryLimit     *int       `yaml:"failedJobsHistoryLimit"`
		JobTemplate                k8sJobTmpl `yaml:"jobTemplate"`
	}
	k8sJobTmpl struct {
		Metadata k8sMeta    `yaml:"metadata"`
		Spec     k8sJobSpec `yaml:"spec"`
	}
	k8sJobSpec struct {
		BackoffLimit          *int `yaml:"backoffLimit"`
		ActiveDeadlineSeconds *int `yaml:"activeDeadlineSeconds"`
		// Checked field by field by internal/kubedocs against k8s.io/api.
		BackoffLimitPerIndex *int       `yaml:"backoffLimitPerIndex"`
		PodFailurePolicy     any        `yaml:"podFailurePolicy"`
		CompletionMode       string     `yaml:"completionMode"`
		Completions          *int       `yaml:"completions"`
		Parallelism          *int       `yaml:"parallelism"`
		Template             k8sPodTmpl `yaml:"template"`
	}
	k8sPodTmpl struct {
		Metadata k8sMeta    `yaml:"metadata"`
		Spec     k8sPodSpec `yaml:"spec"`
	}
	k8sPodSpec struct {
		RestartPolicy                 string `yaml:"restartPolicy"`
		TerminationGracePeriodSeconds *int   `yaml:"terminationGracePeriodSeconds"`
		SecurityContext               *struct {
			RunAsNonRoot *bool  `yaml:"runAsNonRoot"`
			RunAsUser    *int64 `yaml:"runAsUser"`
			RunAsGroup   *int64 `yaml:"runAsGroup"`
			FSGroup      *int64 `yaml:"fsGroup"`
			// The restricted profile's fields: checked by internal/kubedocs
			// against k8s.io/api and the Pod Security rules.
			SeccompProfile any `yaml:"seccompProfile"`
		} `yaml:"securityContext"`
		Containers []k8sContainer `yaml:"containers"`
		Volumes    []struct {
			Name                  string `yaml:"name"`
			PersistentVolumeClaim *struct {
				ClaimName string `yaml:"claimName"`
			} `yaml:"persistentVolumeClaim"`
			ConfigMap *struct {
				Name string `yaml:"name"`
			} `yaml:"configMap"`
			EmptyDir *struct {
				Medium string `yaml:"medium"`
			} `yaml:"emptyDir"`
			Secret *struct {
				SecretName string `yaml:"secretName"`
			} `yaml:"secret"`
		} `yaml:"volumes"`
	}
	k8sContainer struct {
		// Checked by internal/kubedocs (restricted profile, resources).
		SecurityContext any `yaml:"securityContext"`
		Resources       any `yaml:"resources"`

		Name    string   `yaml:"name"`
		Image   string   `yaml:"image"`
		Command []string `yaml:"command"`
		Args    []string `yaml:"args"`
		Env     []struct {
			Name      string `yaml:"name"`
			Value     string `yaml:"value"`
			ValueFrom *struct {
				FieldRef *struct {
					FieldPath string `yaml:"fieldPath"`
				} `yaml:"fieldRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
			ReadOnly  bool   `yaml:"readOnly"`
		} `yaml:"volumeMounts"`
	}
	promScrapeConfig struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
			MetricRelabelConfigs []struct {
				SourceLabels []string `yaml:"source_labels"`
				Separator    string   `yaml:"separator"`
				Regex        string   `yaml:"regex"`
				TargetLabel  string   `yaml:"target_label"`
				Replacement  string   `yaml:"replacement"`
				Action       string   `yaml:"action"`
			} `yaml:"metric_relabel_configs"`
		} `yaml:"scrape_configs"`
	}
)

func strictYAML(src string, v any) error {
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	return dec.Decode(v)
}

func strictNode(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	return strictYAML(string(b), v)
}

// yamlBlocks are the ```yaml blocks of a markdown file, with their lines.
func yamlBlocks(doc string) (blocks []docCommand) {
	var cur []string
	start, in := 0, false
	for i, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case !in && t == "```yaml":
			in, start, cur = true, i+2, nil
		case in && t == "```":
			in = false
			blocks = append(blocks, docCommand{line: start, args: []string{strings.Join(cur, "\n")}})
		case in:
			cur = append(cur, l)
		}
	}
	return blocks
}

// TestREADMEYAML parses every YAML example of the README and docs/: all must
// be YAML; Kubernetes objects must have the shapes the API server accepts
// (decoded strictly) and run as typed in the distroless image — no shell,
// healthctl as the entrypoint so args are a healthctl command line that
// parses, every $(VAR) in them defined in the container's env, fsGroup when
// a volume holds state; the Prometheus relabelling must give healthctl's
// series their target as instance.
func TestREADMEYAML(t *testing.T) {
	docs, _ := filepath.Glob("../../docs/*.md")
	k8s, prom := 0, 0
	varRef := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	for _, file := range append([]string{"../../README.md"}, docs...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, blk := range yamlBlocks(string(b)) {
			src, where := blk.args[0], fmt.Sprintf("%s:%d", file, blk.line)
			var any any
			if err := yaml.Unmarshal([]byte(src), &any); err != nil {
				t.Errorf("%s: not YAML: %v", where, err)
				continue
			}
			if strings.Contains(src, "scrape_configs:") {
				prom++
				if strings.Contains(src, "metrics_path: /probe") {
					checkProbeScrape(t, where, src)
				} else {
					checkRelabel(t, where, src)
				}
				continue
			}
			var obj k8sObject
			if yaml.Unmarshal([]byte(src), &obj) != nil || obj.APIVersion == "" {
				continue
			}
			k8s++
			if err := strictYAML(src, &obj); err != nil {
				t.Errorf("%s: %s: %v", where, obj.Kind, err)
				continue
			}
			var job k8sJobSpec
			switch obj.Kind {
			case "CronJob":
				var cj k8sCronJobSpec
				if err := strictNode(&obj.Spec, &cj); err != nil {
					t.Errorf("%s: CronJob spec: %v", where, err)
					continue
				}
				job = cj.JobTemplate.Spec
			case "Job":
				if err := strictNode(&obj.Spec, &job); err != nil {
					t.Errorf("%s: Job spec: %v", where, err)
					continue
				}
				if job.CompletionMode == "Indexed" && job.Completions == nil {
					t.Errorf("%s: an Indexed Job needs completions", where)
				}
			default:
				t.Errorf("%s: kind %s: add its shape to TestREADMEYAML", where, obj.Kind)
				continue
			}
			pod := job.Template.Spec
			volumes := map[string]bool{}
			stateful := false
			for _, v := range pod.Volumes {
				volumes[v.Name] = true
				stateful = stateful || v.PersistentVolumeClaim != nil
			}
			if stateful && (pod.SecurityContext == nil || pod.SecurityContext.FSGroup == nil) {
				t.Errorf("%s: a state volume without the pod's securityContext.fsGroup: the nonroot image cannot write it", where)
			}
			for _, c := range pod.Containers {
				if !strings.Contains(c.Image, "healthctl") {
					continue
				}
				if len(c.Command) > 0 {
					t.Errorf("%s: container %s: command %v: the image is distroless (no shell) and its entrypoint is healthctl", where, c.Name, c.Command)
				}
				env := map[string]bool{}
				for _, e := range c.Env {
					env[e.Name] = true
				}
				args := make([]string, len(c.Args))
				for i, a := range c.Args {
					for _, m := range varRef.FindAllStringSubmatch(a, -1) {
						if !env[m[1]] {
							t.Errorf("%s: container %s: $(%s) is not in its env, so Kubernetes leaves it as typed", where, c.Name, m[1])
						}
					}
					args[i] = varRef.ReplaceAllString(a, "0")
				}
				if err := parseOnly(args); err != nil {
					t.Errorf("%s: container %s: healthctl %s: %v", where, c.Name, strings.Join(args, " "), err)
				}
				for _, m := range c.VolumeMounts {
					if !volumes[m.Name] {
						t.Errorf("%s: container %s mounts %q, which is not a volume", where, c.Name, m.Name)
					}
				}
			}
		}
	}
	if k8s < 2 || prom < 1 {
		t.Fatalf("found %d Kubernetes and %d Prometheus examples; the extractor is broken", k8s, prom)
	}
}

// checkRelabel applies the example's metric_relabel_configs (replace, the
// default action) to a healthctl series and a node_exporter one.
func checkRelabel(t *testing.T, where, src string) {
	var cfg promScrapeConfig
	if err := strictYAML(src, &cfg); err != nil {
		t.Errorf("%s: scrape config: %v", where, err)
		return
	}
	apply := func(labels map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range labels {
			out[k] = v
		}
		for _, sc := range cfg.ScrapeConfigs {
			for _, rc := range sc.MetricRelabelConfigs {
				if rc.Action != "" && rc.Action != "replace" {
					t.Fatalf("%s: action %q: the test knows replace only", where, rc.Action)
				}
				sep := rc.Separator
				if sep == "" {
					sep = ";"
				}
				vals := make([]string, len(rc.SourceLabels))
				for i, l := range rc.SourceLabels {
					vals[i] = out[l]
				}
				re, err := regexp.Compile("^(?:" + rc.Regex + ")$")
				if err != nil {
					t.Fatalf("%s: regex %q: %v", where, rc.Regex, err)
				}
				joined := strings.Join(vals, sep)
				if m := re.FindStringSubmatchIndex(joined); m != nil {
					out[rc.TargetLabel] = string(re.ExpandString(nil, rc.Replacement, joined, m))
				}
			}
		}
		return out
	}
	got := apply(map[string]string{"__name__": "probe_success", "target": "checkout", "instance": "node1:9100"})
	if got["instance"] != "checkout" {
		t.Errorf("%s: probe_success{target=checkout} gets instance %q, want checkout", where, got["instance"])
	}
	got = apply(map[string]string{"__name__": "node_load1", "instance": "node1:9100"})
	if got["instance"] != "node1:9100" {
		t.Errorf("%s: node_load1 gets instance %q, want node1:9100 (untouched)", where, got["instance"])
	}
	got = apply(map[string]string{"__name__": "healthctl_sweeps_total", "instance": "node1:9100"})
	if got["instance"] != "node1:9100" {
		t.Errorf("%s: healthctl_sweeps_total (no target) gets instance %q", where, got["instance"])
	}
}

// TestREADMESchedulers: cron lines name healthctl by an absolute path (cron's
// PATH is /usr/bin:/bin), and a systemd unit running a long-lived watch
// (no --once) counts its SIGTERM exit, 143, as success.
func TestREADMESchedulers(t *testing.T) {
	docs, _ := filepath.Glob("../../docs/*.md")
	cron, units := 0, 0
	cronLine := regexp.MustCompile(`^(?:@\w+|(?:\S+\s+){5})(\S+)`)
	for _, file := range append([]string{"../../README.md"}, docs...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		fence := ""
		var unit []string
		check := func() {
			text := strings.Join(unit, "\n")
			for _, l := range unit {
				if strings.HasPrefix(l, "ExecStart=") && strings.Contains(l, "healthctl watch") && !strings.Contains(l, "--once") {
					units++
					if !regexp.MustCompile(`(?m)^SuccessExitStatus=.*\b143\b`).MatchString(text) {
						t.Errorf("%s: a long-running watch unit without SuccessExitStatus=143: every systemctl stop fails it", file)
					}
				}
			}
			unit = nil
		}
		for i, l := range strings.Split(string(b), "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") {
				if fence == "" {
					fence = strings.TrimPrefix(t, "```")
				} else {
					if fence == "ini" {
						check()
					}
					fence = ""
				}
				continue
			}
			switch fence {
			case "cron":
				if m := cronLine.FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, "#") && strings.Contains(l, "healthctl") {
					cron++
					if !strings.HasPrefix(m[1], "/") {
						t.Errorf("%s:%d: cron runs %q: cron's PATH is /usr/bin:/bin, give the full path", file, i+1, m[1])
					}
				}
			case "ini":
				if strings.HasPrefix(l, "# ") && strings.HasSuffix(l, ".service") {
					check()
				}
				unit = append(unit, l)
			}
		}
	}
	if cron < 2 || units < 1 {
		t.Fatalf("found %d cron lines and %d long-running units; the extractor is broken", cron, units)
	}
}

// checkProbeScrape checks a /probe scrape config (blackbox_exporter's
// multi-target pattern, docs/watch.md): its relabel_configs applied to each
// static target send the scrape to a loopback listener with the target as
// ?target= and as instance; promtool checks it too where installed.
// watch_listen_status.txtar scrapes with the same config for real.
func checkProbeScrape(t *testing.T, where, src string) {
	var cfg struct {
		ScrapeConfigs []struct {
			JobName       string              `yaml:"job_name"`
			MetricsPath   string              `yaml:"metrics_path"`
			Params        map[string][]string `yaml:"params"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
			RelabelConfigs []struct {
				SourceLabels []string `yaml:"source_labels"`
				TargetLabel  string   `yaml:"target_label"`
				Replacement  string   `yaml:"replacement"`
			} `yaml:"relabel_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := strictYAML(src, &cfg); err != nil {
		t.Errorf("%s: /probe scrape config: %v", where, err)
		return
	}
	n := 0
	for _, sc := range cfg.ScrapeConfigs {
		if len(sc.Params["module"]) != 1 || sc.Params["module"][0] != "http_2xx" {
			t.Errorf("%s: module %v, want [http_2xx] (the default module)", where, sc.Params["module"])
		}
		for _, st := range sc.StaticConfigs {
			for _, tg := range st.Targets {
				n++
				labels := map[string]string{"__address__": tg}
				for _, rc := range sc.RelabelConfigs {
					v := rc.Replacement
					if len(rc.SourceLabels) > 0 {
						v = labels[rc.SourceLabels[0]]
					}
					labels[rc.TargetLabel] = v
				}
				if labels["__param_target"] != tg || labels["instance"] != tg || !strings.HasPrefix(labels["__address__"], "127.0.0.1:") {
					t.Errorf("%s: target %s relabels to %v", where, tg, labels)
				}
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: no static targets", where)
	}
	if _, err := exec.LookPath("promtool"); err == nil {
		f := filepath.Join(t.TempDir(), "prometheus.yml")
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("promtool", "check", "config", f).CombinedOutput(); err != nil {
			t.Errorf("%s: promtool check config: %v\n%s", where, err, out)
		}
	}
}
