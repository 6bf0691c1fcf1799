package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/targetsfile"
)

// TestSystemdUnitsAreThePages: the units and the timer the packages install
// are, byte for byte, the ones docs/watch.md shows (no copy that drifts),
// and each unit treats 8 and 9 as success, needs the targets file, passes
// --failure-threshold 3 as the page says, and writes the metrics into the
// directory its distributions' node_exporter reads (Debian's
// /var/lib/prometheus/node-exporter; upstream's textfile_collector, which
// RPM packages follow), which it creates.
func TestSystemdUnitsAreThePages(t *testing.T) {
	page, err := os.ReadFile("../../docs/watch.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]bool{}
	for _, b := range regexp.MustCompile("(?s)```ini\n(.*?)```").FindAllSubmatch(page, -1) {
		blocks[string(b[1])] = true
	}
	for _, name := range []string{"deb/healthctl-watch.service", "rpm/healthctl-watch.service", "healthctl-watch.timer"} {
		b, err := os.ReadFile(filepath.Join("../../packaging/systemd", name))
		if err != nil {
			t.Fatal(err)
		}
		if !blocks[string(b)] {
			t.Errorf("docs/watch.md has no ```ini block equal to packaging/systemd/%s:\n%s", name, b)
		}
	}
	for packager, dir := range map[string]string{"deb": "/var/lib/prometheus/node-exporter", "rpm": "/var/lib/node_exporter/textfile_collector"} {
		unit, _ := os.ReadFile("../../packaging/systemd/" + packager + "/healthctl-watch.service")
		for _, want := range []string{"\nSuccessExitStatus=8 9\n", "\nConditionPathExists=/etc/healthctl/targets.yaml\n", " --targets /etc/healthctl/targets.yaml ", " --failure-threshold 3 ", "\nType=oneshot\n",
			" --prom-file " + dir + "/healthctl.prom ", "\nExecStartPre=/bin/mkdir -p " + dir + "\n"} {
			if !strings.Contains(string(unit), want) {
				t.Errorf("the %s's healthctl-watch.service lacks %q", packager, strings.TrimSpace(want))
			}
		}
		for _, l := range strings.Split(string(unit), "\n") {
			if strings.HasPrefix(l, "ExecStart=") {
				if err := parseOnly(strings.Fields(strings.TrimPrefix(l, "ExecStart=/usr/bin/healthctl"))); err != nil {
					t.Errorf("%s: %v", l, err)
				}
			}
		}
	}
}

// TestExampleTargetsFile: the example the packages ship loads as watch
// reads it, and sends nothing off the machine if run as shipped.
func TestExampleTargetsFile(t *testing.T) {
	ts, err := targetsfile.ReadTargets("../../packaging/examples/targets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) < 2 {
		t.Fatalf("%d targets", len(ts))
	}
	for _, tg := range ts {
		if !strings.HasPrefix(tg.URL, "http://127.0.0.1:") {
			t.Errorf("target %s: %s: the example's URLs are loopback", tg.Name, tg.URL)
		}
	}
}

// goreleaserConfig is the part of .goreleaser.yaml the packages come from.
type goreleaserConfig struct {
	NFPMs []struct {
		Formats  []string `yaml:"formats"`
		Contents []struct {
			Src      string `yaml:"src"`
			Dst      string `yaml:"dst"`
			Packager string `yaml:"packager"`
			Type     string `yaml:"type"`
		} `yaml:"contents"`
	} `yaml:"nfpms"`
}

// installs is what one packager's package installs, dst to src.
func installs(t *testing.T, packager string) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg goreleaserConfig
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.NFPMs) != 1 {
		t.Fatalf("%d nfpms entries", len(cfg.NFPMs))
	}
	out := map[string]string{}
	for _, c := range cfg.NFPMs[0].Contents {
		if c.Packager != "" && c.Packager != packager {
			continue
		}
		if _, dup := out[c.Dst]; dup {
			t.Errorf("%s: %s installed twice", packager, c.Dst)
		}
		out[c.Dst] = c.Src
		if !strings.HasPrefix(c.Src, ".release/") {
			if _, err := os.Stat(filepath.Join("../..", c.Src)); err != nil {
				t.Errorf("%s: %s: %v", packager, c.Dst, err)
			}
		}
	}
	return out
}

// TestPackagesPerDistribution: each packager puts files where its
// distributions look for them (zsh completions in Debian's
// vendor-completions, in Fedora's site-functions; each its own unit), and
// both ship a unit,
// the example targets file and the alert rules; the .deb its copyright.
func TestPackagesPerDistribution(t *testing.T) {
	common := map[string]string{
		"/usr/share/bash-completion/completions/healthctl":       ".release/completions/healthctl.bash",
		"/usr/share/fish/vendor_completions.d/healthctl.fish":    ".release/completions/healthctl.fish",
		"/usr/share/man/man1/":                                   ".release/man/*.1.gz",
		"/usr/lib/systemd/system/healthctl-watch.timer":          "packaging/systemd/healthctl-watch.timer",
		"/usr/share/doc/healthctl/examples/targets.yaml":         "packaging/examples/targets.yaml",
		"/usr/share/doc/healthctl/examples/healthctl-alerts.yml": "docs/healthctl-alerts.yml",
	}
	want := map[string]map[string]string{
		"deb": {"/usr/share/zsh/vendor-completions/_healthctl": ".release/completions/healthctl.zsh",
			"/usr/share/doc/healthctl/copyright":              "packaging/deb/copyright",
			"/usr/lib/systemd/system/healthctl-watch.service": "packaging/systemd/deb/healthctl-watch.service"},
		"rpm": {"/usr/share/zsh/site-functions/_healthctl": ".release/completions/healthctl.zsh",
			"/usr/share/licenses/healthctl/LICENSE":           "LICENSE",
			"/usr/lib/systemd/system/healthctl-watch.service": "packaging/systemd/rpm/healthctl-watch.service"},
	}
	for packager, own := range want {
		got := installs(t, packager)
		for dst, src := range common {
			if got[dst] != src {
				t.Errorf("%s: %s from %q, want %q", packager, dst, got[dst], src)
			}
		}
		for dst, src := range own {
			if got[dst] != src {
				t.Errorf("%s: %s from %q, want %q", packager, dst, got[dst], src)
			}
		}
	}
	if _, ok := installs(t, "rpm")["/usr/share/zsh/vendor-completions/_healthctl"]; ok {
		t.Error("the .rpm installs zsh's Debian path")
	}
}

// TestDockerfileRecipes parses the repository's Dockerfile and the
// Dockerfile recipes in the docs: every COPY --from names a stage defined
// before it (or the healthctl image the docs build first), and the context
// holds every file git tracks (LICENSE was left out once) and .git, so Go's
// VCS stamp names a clean commit.
func TestDockerfileRecipes(t *testing.T) {
	repo, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	recipes := []struct{ where, text string }{{"Dockerfile", string(repo)}}
	docs, _ := filepath.Glob("../../docs/*.md")
	for _, f := range append([]string{"../../README.md"}, docs...) {
		b, _ := os.ReadFile(f)
		for _, m := range regexp.MustCompile("(?s)```dockerfile\n(.*?)```").FindAllSubmatch(b, -1) {
			recipes = append(recipes, struct{ where, text string }{f, string(m[1])})
		}
	}
	if len(recipes) < 2 {
		t.Fatal("no Dockerfile recipe found in the docs")
	}
	ignore, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recipes {
		stages := map[string]bool{}
		froms := 0
		for _, ins := range dockerInstructions(r.text) {
			f := strings.Fields(ins)
			switch strings.ToUpper(f[0]) {
			case "FROM":
				froms++
				if len(f) >= 4 && strings.EqualFold(f[len(f)-2], "AS") {
					stages[strings.ToLower(f[len(f)-1])] = true
				}
			case "COPY":
				from := ""
				var args []string
				for _, a := range f[1:] {
					if v, ok := strings.CutPrefix(a, "--from="); ok {
						from = strings.ToLower(v)
					} else if !strings.HasPrefix(a, "--") {
						args = append(args, a)
					}
				}
				switch {
				case from == "healthctl":
					// the image of this repository's Dockerfile, built first
				case from != "":
					if !stages[from] {
						t.Errorf("%s: %q copies from stage %q, which is not defined before it", r.where, ins, from)
					}
				case r.where == "Dockerfile":
					for _, src := range args[:len(args)-1] {
						if src != "." && dockerIgnored(string(ignore), src) {
							t.Errorf("Dockerfile: %q: %s is excluded by .dockerignore", ins, src)
						}
					}
				}
			}
		}
		if froms == 0 {
			t.Errorf("%s: no FROM", r.where)
		}
	}
	// Go's VCS stamp is "+dirty" when a tracked file is missing: the
	// context must hold every one of them, and .git.
	keep := []string{"LICENSE", "go.mod", "cmd/healthctl/main.go", ".git/HEAD"}
	if out, err := exec.Command("git", "-C", "../..", "ls-files").Output(); err == nil {
		keep = append(keep, strings.Fields(string(out))...)
	}
	for _, p := range keep {
		if dockerIgnored(string(ignore), p) {
			t.Errorf(".dockerignore excludes %s (git tracks it: the image's version would say +dirty)", p)
		}
	}
	for _, p := range []string{"dist/healthctl_1.0.0_amd64.deb", ".release/man/healthctl.1.gz", "healthctl", "internal/probe/probe.test"} {
		if !dockerIgnored(string(ignore), p) {
			t.Errorf(".dockerignore lets %s in (git ignores it)", p)
		}
	}
	if !strings.Contains(string(repo), "COPY --from=build /src/LICENSE ") {
		t.Error("the image does not carry LICENSE")
	}
	if regexp.MustCompile(`(?m)^ARG .*\bVERSION\b`).Match(repo) {
		t.Error("the image's version comes from a build argument, not the VCS stamp")
	}
}

// dockerInstructions joins continuation lines and drops comments.
func dockerInstructions(text string) []string {
	var out []string
	cur := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if cur == "" && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cur += s + " "
			continue
		}
		out = append(out, cur+l)
		cur = ""
	}
	return out
}

// dockerIgnored applies .dockerignore's rules as Docker does: in order, the
// last pattern that matches the path or one of its parents wins, ! re-includes.
func dockerIgnored(rules, path string) bool {
	ignored := false
	for _, l := range strings.Split(rules, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		neg := strings.HasPrefix(l, "!")
		// A leading / anchors nothing more: patterns are relative to the root.
		pat := strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(l, "!"), "/"), "/")
		if dockerMatch(pat, path) {
			ignored = !neg
		}
	}
	return ignored
}

func dockerMatch(pat, path string) bool {
	parts := strings.Split(path, "/")
	for i := 1; i <= len(parts); i++ {
		p := strings.Join(parts[:i], "/")
		if rest, ok := strings.CutPrefix(pat, "**/"); ok {
			for j := 0; j < i; j++ {
				if m, _ := filepath.Match(rest, strings.Join(parts[j:i], "/")); m {
					return true
				}
			}
			continue
		}
		if m, _ := filepath.Match(pat, p); m {
			return true
		}
	}
	return false
}

// TestReleaseSnapshotPackages inspects the snapshot's .deb (dpkg-deb -c)
// and .rpm (rpm -qpl) when scripts/release-check.sh has left one in dist/
// (goreleaser is not installed in CI: building it takes many minutes).
func TestReleaseSnapshotPackages(t *testing.T) {
	debs, _ := filepath.Glob("../../dist/healthctl_*_amd64.deb")
	rpms, _ := filepath.Glob("../../dist/healthctl-*.x86_64.rpm")
	if len(debs) == 0 || len(rpms) == 0 {
		t.Skip("no snapshot in dist/ (bash scripts/release-check.sh makes one)")
	}
	list := func(name string, args ...string) []string {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("%s not installed", name)
		}
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		var files []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(l)
			files = append(files, strings.TrimPrefix(strings.TrimPrefix(f[len(f)-1], "."), ""))
		}
		return files
	}
	man := []string{"/usr/share/man/man1/healthctl.1.gz", "/usr/share/man/man1/healthctl-completion.1.gz", "/usr/share/man/man1/healthctl-watch.1.gz"}
	check := func(pkg string, files []string, want []string) {
		for _, w := range append(want, man...) {
			if !slices.Contains(files, w) {
				t.Errorf("%s does not install %s", filepath.Base(pkg), w)
			}
		}
	}
	check(debs[0], list("dpkg-deb", "-c", debs[0]), []string{"/usr/share/zsh/vendor-completions/_healthctl",
		"/usr/share/doc/healthctl/examples/targets.yaml", "/usr/share/doc/healthctl/examples/healthctl-alerts.yml",
		"/usr/share/doc/healthctl/copyright", "/usr/lib/systemd/system/healthctl-watch.service"})
	check(rpms[0], list("rpm", "-qpl", rpms[0]), []string{"/usr/share/zsh/site-functions/_healthctl",
		"/usr/share/doc/healthctl/examples/targets.yaml", "/usr/lib/systemd/system/healthctl-watch.service"})
}
