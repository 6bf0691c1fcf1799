package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
	"github.com/healthctl/healthctl/internal/output"
)

// action is the part of action.yml the test reads.
type action struct {
	Inputs map[string]struct {
		Default  string `yaml:"default"`
		Required bool   `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	If   string            `yaml:"if"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

// actionRunner runs action.yml's bash steps in order as a runner would,
// with GITHUB_OUTPUT, GITHUB_PATH and GITHUB_STEP_SUMMARY files and the
// ${{ }} expressions the steps use; `uses:` steps (actions/cache) are left out.
type actionRunner struct {
	t       *testing.T
	a       action
	env     []string // the process environment of every step
	dir     string
	summary string
	// actionPath is github.action_path (default: the repository).
	actionPath string
}

type actionRun struct {
	out     string            // every step's stdout and stderr
	code    int               // the failing step's exit code, or 0
	outputs map[string]string // the action's outputs
	steps   map[string]map[string]string
}

func (r *actionRunner) run(inputs map[string]string, actionRef string) actionRun {
	t := r.t
	res := actionRun{outputs: map[string]string{}, steps: map[string]map[string]string{}}
	expr := regexp.MustCompile(`\$\{\{ *([a-z_.-]+) *\}\}`)
	value := func(e string) string {
		switch {
		case strings.HasPrefix(e, "inputs."):
			name := strings.TrimPrefix(e, "inputs.")
			if v, ok := inputs[name]; ok {
				return v
			}
			return r.a.Inputs[name].Default
		case e == "github.action_ref":
			return actionRef
		case e == "github.action_path":
			if r.actionPath != "" {
				return r.actionPath
			}
			abs, _ := filepath.Abs("../..")
			return abs
		case strings.HasPrefix(e, "steps."):
			parts := strings.Split(e, ".") // steps.ID.outputs.NAME
			if len(parts) != 4 || parts[2] != "outputs" {
				t.Fatalf("expression %q", e)
			}
			return res.steps[parts[1]][parts[3]]
		}
		t.Fatalf("the test does not know the expression %q", e)
		return ""
	}
	var log bytes.Buffer
	for _, s := range r.a.Runs.Steps {
		if s.Uses != "" {
			continue
		}
		outFile := filepath.Join(r.dir, "output-"+s.ID)
		os.WriteFile(outFile, nil, 0o644)
		cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", s.Run)
		cmd.Env = append(append([]string(nil), r.env...), "GITHUB_OUTPUT="+outFile,
			"GITHUB_PATH="+filepath.Join(r.dir, "path"), "GITHUB_STEP_SUMMARY="+r.summary)
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+expr.ReplaceAllStringFunc(v, func(m string) string { return value(expr.FindStringSubmatch(m)[1]) }))
		}
		cmd.Stdout, cmd.Stderr = &log, &log
		err := cmd.Run()
		b, _ := os.ReadFile(outFile)
		outs := map[string]string{}
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				outs[k] = v
			}
		}
		res.steps[s.ID] = outs
		if ee, ok := err.(*exec.ExitError); ok {
			res.code = ee.ExitCode()
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for name, o := range r.a.Outputs {
		res.outputs[name] = expr.ReplaceAllStringFunc(o.Value, func(m string) string { return value(expr.FindStringSubmatch(m)[1]) })
	}
	res.out = log.String()
	return res
}

// fakeRelease serves GitHub releases of healthctl (v1.2.3, and the release
// the repository's VERSION file records: the archives for linux_amd64 and
// windows_amd64 and checksums.txt) and the Go module proxy's answers on
// loopback, counting the archive downloads and the proxy's queries.
type fakeRelease struct {
	srv       *httptest.Server
	downloads atomic.Int32
	proxyHits atomic.Int32
	tamper    atomic.Bool
}

// releaseAssets are the fake release's archives and their checksums, made
// once a test binary: the archive holds the test binary itself (tens of
// MiB), and gzip and SHA-256 over it under the race detector were most of
// the action tests' time. The archive is stored, not compressed: tar -xzf
// reads it all the same.
var releaseAssets struct {
	once   sync.Once
	assets map[string][]byte
	sums   map[string]string
	err    error
}

func fakeReleaseAssets(hc string) (map[string][]byte, map[string]string, error) {
	ra := &releaseAssets
	ra.once.Do(func() {
		bin, err := os.ReadFile(hc)
		if err != nil {
			ra.err = err
			return
		}
		var tgz bytes.Buffer
		gz, _ := gzip.NewWriterLevel(&tgz, gzip.NoCompression)
		tw := tar.NewWriter(gz)
		for _, f := range []struct {
			name string
			body []byte
		}{{"LICENSE", []byte("Apache-2.0")}, {"healthctl", bin}} {
			tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(f.body))})
			tw.Write(f.body)
		}
		tw.Close()
		gz.Close()
		var zbuf bytes.Buffer
		zw := zip.NewWriter(&zbuf)
		for _, f := range []struct {
			name string
			body []byte
		}{{"LICENSE", []byte("Apache-2.0")}, {"healthctl.exe", []byte("#!/bin/sh\n# the test binary runs as healthctl only under that name\nexec " + hc + " \"$@\"\n")}} {
			w, _ := zw.Create(f.name)
			w.Write(f.body)
		}
		zw.Close()
		ra.assets = map[string][]byte{"linux_amd64.tar.gz": tgz.Bytes(), "windows_amd64.zip": zbuf.Bytes()}
		ra.sums = map[string]string{}
		for name, body := range ra.assets {
			ra.sums[name] = fmt.Sprintf("%x", sha256.Sum256(body))
		}
	})
	return ra.assets, ra.sums, ra.err
}

func newFakeRelease(t *testing.T, hc string) *fakeRelease {
	assets, sums, err := fakeReleaseAssets(hc)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	fr := &fakeRelease{}
	versions := map[string]bool{"v1.2.3": true, strings.TrimSpace(string(recorded)): true}
	fr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/proxy/") {
			fr.proxyHits.Add(1)
		}
		if rest, ok := strings.CutPrefix(r.URL.Path, "/releases/"); ok {
			v, file, _ := strings.Cut(rest, "/")
			if v == "v5.0.0" {
				// A release server in trouble: not a missing platform.
				http.Error(w, "upstream trouble", http.StatusInternalServerError)
				return
			}
			if !versions[v] {
				http.NotFound(w, r)
				return
			}
			prefix := "healthctl_" + strings.TrimPrefix(v, "v") + "_"
			if file == "checksums.txt" {
				fmt.Fprintf(w, "%s  %sdarwin_arm64.tar.gz\n", strings.Repeat("1", 64), prefix)
				for name := range assets {
					sum := sums[name]
					if fr.tamper.Load() {
						sum = strings.Repeat("0", 64)
					}
					fmt.Fprintf(w, "%s  %s%s\n", sum, prefix, name)
				}
				return
			}
			if body, ok := assets[strings.TrimPrefix(file, prefix)]; ok && strings.HasPrefix(file, prefix) {
				fr.downloads.Add(1)
				w.Write(body)
				return
			}
			http.NotFound(w, r)
			return
		}
		switch r.URL.Path {
		case "/proxy/github.com/healthctl/healthctl/@v/list":
			fmt.Fprint(w, "v1.0.0\nv1.2.3\nv1.10.0-rc.1\nv0.9.0\n")
		case "/proxy/github.com/healthctl/healthctl/@latest":
			fmt.Fprint(w, `{"Version":"v1.2.3","Time":"2026-11-01T00:00:00Z"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(fr.srv.Close)
	return fr
}

// TestActionYAML runs the GitHub Action's steps with bash as a runner
// would, against loopback fixtures and a loopback fake release: the release
// binary for the runner's OS and arch is downloaded, checked against
// checksums.txt (a mismatch fails with an annotation) and cached; version
// defaults to the action's own ref; a ref that is not a release is built
// with the runner's go into a directory of its own; the wait's inputs are
// real wait-healthy flags; outputs, the job summary and the ::error::
// annotation say what happened.
func TestActionYAML(t *testing.T) {
	besideScripts(t)
	stackfix.Require(t, stacksDir, "bash", "curl", "tar", "sha256sum")
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
	if a.Inputs["version"].Default != "" {
		t.Errorf("version defaults to %q, want empty (the action's own ref)", a.Inputs["version"].Default)
	}
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Uses, "setup-go") {
			t.Errorf("step %q changes the caller's Go (%s)", s.Name, s.Uses)
		}
		if strings.Contains(s.Run, "GOPATH") {
			t.Errorf("step %q relies on GOPATH (wrong when GOBIN is set)", s.Name)
		}
	}
	for _, name := range []string{"outcome", "reason", "exit-code", "attempts", "elapsed-ms"} {
		if a.Outputs[name].Value == "" {
			t.Errorf("no output %q", name)
		}
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

	hc, err := exec.LookPath("healthctl")
	if err != nil {
		t.Fatal(err)
	}
	rel := newFakeRelease(t, hc)
	dir := t.TempDir()
	// A stand-in go that records how it was called and "builds" healthctl.
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	goLog := filepath.Join(dir, "go.log")
	os.WriteFile(filepath.Join(dir, "bin", "go"), []byte(fmt.Sprintf(`#!/bin/sh
case "$1" in
install) echo "GOBIN=$GOBIN $*" >>%q; mkdir -p "$GOBIN" && cp %q "$GOBIN/healthctl" ;;
version) echo "go version go1.26.8 linux/amd64" ;;
*) exit 1 ;;
esac
`, goLog, hc)), 0o755)
	r := &actionRunner{t: t, a: a, dir: dir, summary: filepath.Join(dir, "summary.md")}
	toolCache := filepath.Join(dir, "toolcache")
	r.env = append(os.Environ(),
		"PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"),
		"HEALTHCTL_DNS_SERVER=127.0.0.1:9",
		"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "RUNNER_TOOL_CACHE="+toolCache, "RUNNER_TEMP="+dir,
		"HEALTHCTL_ACTION_RELEASES_URL="+rel.srv.URL+"/releases",
		"HEALTHCTL_ACTION_PROXY_URL="+rel.srv.URL+"/proxy",
	)

	up, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Body: "ok ready"})
	if err != nil {
		t.Fatal(err)
	}
	closed, err := fixture.NewClosedPort(t)
	if err != nil {
		t.Fatal(err)
	}

	// The action's own tag: v1.2.3 is downloaded, verified, put in the tool cache.
	res := r.run(map[string]string{"url": up.URL + "/a " + up.URL + "/b\n" + up.URL + "/c", "args": "--expect-body\nok ready\n"}, "v1.2.3")
	if res.code != 0 || !strings.Contains(res.out, "checksum verified") {
		t.Fatalf("three healthy URLs: exit %d\n%s", res.code, res.out)
	}
	if got := res.outputs; got["outcome"] != "pass" || got["reason"] != "ok" || got["exit-code"] != "0" || got["attempts"] != "3" || got["elapsed-ms"] == "" {
		t.Errorf("outputs %v\n%s", got, res.out)
	}
	wantBin := filepath.Join(toolCache, "healthctl", "v1.2.3", "linux_amd64", "healthctl")
	if p := res.steps["install"]["path"]; p != wantBin {
		t.Errorf("installed at %q, want %q", p, wantBin)
	}
	if n := rel.downloads.Load(); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
	// Cached: no second download.
	res = r.run(map[string]string{"url": closed.URL() + "/health", "timeout": "300ms"}, "v1.2.3")
	if n := rel.downloads.Load(); n != 1 || !strings.Contains(res.out, "from the cache") {
		t.Errorf("%d downloads after a second run, want 1 (cached)\n%s", n, res.out)
	}
	// A failure: the outcome's exit code, outputs, an annotation and a summary line.
	if res.code != exitcode.Refused || !strings.Contains(res.out, "conn_refused") {
		t.Errorf("refused: exit %d, want %d\n%s", res.code, exitcode.Refused, res.out)
	}
	if got := res.outputs; got["outcome"] != "refused" || got["reason"] != "conn_refused" || got["exit-code"] != "5" {
		t.Errorf("refused outputs %v", got)
	}
	if !regexp.MustCompile(`(?m)^::error title=healthctl wait-healthy refused \(conn_refused\)::no 2xx from http://127\.0\.0\.1:\d+/health within 300ms`).MatchString(res.out) {
		t.Errorf("no ::error:: annotation with the reason:\n%s", res.out)
	}
	summary, _ := os.ReadFile(r.summary)
	if !strings.Contains(string(summary), ":white_check_mark:") || !regexp.MustCompile(`:x: .*refused \(conn_refused\), exit 5: no 2xx from`).Match(summary) {
		t.Errorf("job summary:\n%s", summary)
	}

	// fail-open: the step passes, but as a warning (an annotation and a
	// summary line with ⚠), never a green tick.
	os.WriteFile(r.summary, nil, 0o644)
	res = r.run(map[string]string{"url": closed.URL() + "/health", "timeout": "300ms", "fail-open": "true"}, "v1.2.3")
	if res.code != 0 || !strings.Contains(res.out, "WARN") || res.outputs["outcome"] != "refused" {
		t.Errorf("fail-open: exit %d, outputs %v\n%s", res.code, res.outputs, res.out)
	}
	if !regexp.MustCompile(`(?m)^::warning title=healthctl wait-healthy failed open \(refused, conn_refused\)::no 2xx from http://127\.0\.0\.1:\d+/health within 300ms \(last: refused, conn_refused after \d+ attempts\); failing open \(--fail-open\)$`).MatchString(res.out) {
		t.Errorf("fail-open: no ::warning:: annotation:\n%s", res.out)
	}
	summary, _ = os.ReadFile(r.summary)
	if !regexp.MustCompile(`^- :warning: \*\*healthctl wait-healthy\*\* http://127\.0\.0\.1:\d+/health: failed open after the ceiling: refused \(conn_refused\), \d+ attempts, [0-9.]+ ms: no 2xx from `).Match(summary) || strings.Contains(string(summary), ":white_check_mark:") {
		t.Errorf("fail-open: job summary %q", summary)
	}
	res = r.run(map[string]string{"url": up.URL + "/health", "timeout": "300ms", "args": "--expect-body\nnot there"}, "v1.2.3")
	if res.code != exitcode.Unreachable || res.outputs["reason"] != "condition_failed" {
		t.Errorf("condition: exit %d, outputs %v\n%s", res.code, res.outputs, res.out)
	}
	res = r.run(map[string]string{"url": up.URL + "/health", "args": "--no-such-flag"}, "v1.2.3")
	if res.code != exitcode.Usage || res.outputs["outcome"] != "error" || !strings.Contains(res.out, "::error title=healthctl wait-healthy error (usage)::unknown flag: --no-such-flag") {
		t.Errorf("usage error: exit %d, outputs %v\n%s", res.code, res.outputs, res.out)
	}

	// A major tag (v1) and latest resolve to the newest release through the
	// module proxy; a tampered checksums.txt fails before anything runs.
	os.RemoveAll(toolCache)
	rel.tamper.Store(true)
	res = r.run(map[string]string{"url": up.URL + "/health", "version": "v1"}, "main")
	if res.steps["resolve"]["version"] != "v1.2.3" || res.code == 0 || !strings.Contains(res.out, "::error title=healthctl::healthctl_1.2.3_linux_amd64.tar.gz does not match the release's checksums.txt") {
		t.Errorf("tampered: exit %d, resolved %v\n%s", res.code, res.steps["resolve"], res.out)
	}
	if _, err := os.Stat(wantBin); err == nil {
		t.Error("a binary that failed its checksum was installed")
	}
	rel.tamper.Store(false)
	res = r.run(map[string]string{"url": up.URL + "/health", "version": "latest"}, "")
	if res.steps["resolve"]["version"] != "v1.2.3" || res.code != 0 {
		t.Errorf("latest: exit %d, resolved %v\n%s", res.code, res.steps["resolve"], res.out)
	}

	// An explicit version that is not a release is built with the runner's
	// go, into a directory of its own (GOBIN), not the caller's GOPATH/bin.
	res = r.run(map[string]string{"url": up.URL + "/health", "version": "main"}, "v1.2.3")
	goCalls, _ := os.ReadFile(goLog)
	wantDir := filepath.Join(toolCache, "healthctl", "main", "linux_amd64")
	if res.code != 0 || !strings.Contains(string(goCalls), "GOBIN="+wantDir+" install github.com/healthctl/healthctl/cmd/healthctl@main") {
		t.Errorf("version main: exit %d, go calls %q\n%s", res.code, goCalls, res.out)
	}
	if n := strings.Count(string(goCalls), "install"); n != 1 {
		t.Errorf("go install ran %d times, want once (only for the ref)", n)
	}
}

// TestActionPinnedBySHA: the action pinned by a commit SHA (GitHub's
// hardening advice) runs the release its VERSION file records at that
// commit, on a runner with neither Go nor curl on PATH (wget, then
// python3, download it); v1 is resolved once per run; a missing asset
// names its URL and platform; on Windows the zip is expanded through
// PowerShell with Windows paths (cygpath -w), never MSYS ones.
func TestActionPinnedBySHA(t *testing.T) {
	besideScripts(t)
	stackfix.Require(t, stacksDir, "bash")
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	recordedB, _ := os.ReadFile("../../VERSION")
	recorded := strings.TrimSpace(string(recordedB))
	hc, err := exec.LookPath("healthctl")
	if err != nil {
		t.Fatal(err)
	}
	rel := newFakeRelease(t, hc)
	up, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Body: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A PATH of the system's tools without go and curl (and, for the
	// second runner, without wget: python3 downloads).
	bare := func(name string, drop ...string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(p, 0o755)
		for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				n := e.Name()
				if n == "go" || n == "gofmt" || n == "curl" || slices.Contains(drop, n) || strings.HasPrefix(n, "python") && n != "python3" {
					continue
				}
				if _, err := os.Lstat(filepath.Join(p, n)); err == nil {
					continue
				}
				target := filepath.Join(d, n)
				if n == "python3" {
					target = "/usr/bin/python3"
				}
				os.Symlink(target, filepath.Join(p, n))
			}
		}
		return p
	}
	noCurl := bare("nocurl")
	noWget := bare("nowget", "wget")
	stackfix.Require(t, stacksDir, "/usr/bin/python3")
	for _, p := range []string{noCurl, noWget} {
		for _, tool := range []string{"go", "curl"} {
			if _, err := os.Stat(filepath.Join(p, tool)); err == nil {
				t.Fatalf("%s on the bare PATH", tool)
			}
		}
	}
	sha := strings.Repeat("3f9a1c", 6) + "0b2e"
	runner := func(path, os_, arch string) *actionRunner {
		toolCache := filepath.Join(dir, "toolcache-"+filepath.Base(path)+"-"+os_+arch)
		temp := filepath.Join(dir, "temp-"+filepath.Base(path)+"-"+os_+arch)
		os.MkdirAll(temp, 0o755)
		r := &actionRunner{t: t, a: a, dir: dir, summary: filepath.Join(dir, "summary.md")}
		r.env = []string{"PATH=" + path, "HOME=" + dir, "HEALTHCTL_DNS_SERVER=127.0.0.1:9",
			"RUNNER_OS=" + os_, "RUNNER_ARCH=" + arch, "RUNNER_TOOL_CACHE=" + toolCache, "RUNNER_TEMP=" + temp,
			"HEALTHCTL_ACTION_RELEASES_URL=" + rel.srv.URL + "/releases",
			"HEALTHCTL_ACTION_PROXY_URL=" + rel.srv.URL + "/proxy"}
		return r
	}
	for _, path := range []string{noCurl, noWget} {
		r := runner(path, "Linux", "X64")
		res := r.run(map[string]string{"url": up.URL + "/health", "timeout": "5s"}, sha)
		if res.code != 0 || res.steps["resolve"]["version"] != recorded || !strings.Contains(res.out, "checksum verified") {
			t.Errorf("pinned by SHA, PATH %s: exit %d, resolved %v\n%s", filepath.Base(path), res.code, res.steps["resolve"], res.out)
		}
		if !strings.Contains(res.out, "runs the release its VERSION file names: "+recorded) {
			t.Errorf("no line says which release the pinned commit runs:\n%s", res.out)
		}
	}

	// v1 resolves through the module proxy once per run: a second use of
	// the action in the same run asks nothing.
	r := runner(noCurl, "Linux", "X64")
	before := rel.proxyHits.Load()
	for i := range 2 {
		res := r.run(map[string]string{"url": up.URL + "/health", "version": "v1"}, sha)
		if res.code != 0 || res.steps["resolve"]["version"] != "v1.2.3" {
			t.Fatalf("v1, run %d: exit %d, resolved %v\n%s", i, res.code, res.steps["resolve"], res.out)
		}
	}
	if n := rel.proxyHits.Load() - before; n != 1 {
		t.Errorf("v1 twice in one run: %d proxy queries, want 1", n)
	}

	// No asset for the platform: the error names the URL, what failed
	// (the tool and its words: wget's, python3's) and only then asks
	// about the platform; a release server answering 500 is not asked
	// about platforms.
	for _, c := range []struct{ path, tool string }{{noCurl, `wget failed \(exit 8\): ERROR 404: Not Found\.`}, {noWget, `python3 failed \(exit 1\): HTTP Error 404: Not Found`}} {
		res := runner(c.path, "Linux", "ARM64").run(map[string]string{"url": up.URL + "/health"}, "v1.2.3")
		if res.code == 0 || !regexp.MustCompile(`::error title=healthctl::no healthctl v1\.2\.3 for linux_arm64: http://127\.0\.0\.1:\d+/releases/v1\.2\.3/healthctl_1\.2\.3_linux_arm64\.tar\.gz could not be downloaded: `+c.tool+` \(not found: is linux_arm64 one of the release's platforms\?`).MatchString(res.out) {
			t.Errorf("missing asset, PATH %s: exit %d\n%s", filepath.Base(c.path), res.code, res.out)
		}
	}
	res := runner(noWget, "Linux", "X64").run(map[string]string{"url": up.URL + "/health", "version": "v5.0.0"}, "v1.2.3")
	if res.code == 0 || !regexp.MustCompile(`::error title=healthctl::no healthctl v5\.0\.0 for linux_amd64: \S+ could not be downloaded: python3 failed \(exit 1\): HTTP Error 500: Internal Server Error$`).MatchString(strings.Split(res.out[strings.Index(res.out, "::error"):], "\n")[0]) {
		t.Errorf("release server 500: exit %d\n%s", res.code, res.out)
	}

	// Windows without unzip: PowerShell's Expand-Archive gets Windows paths.
	win := filepath.Join(dir, "win")
	os.MkdirAll(win, 0o755)
	psLog := filepath.Join(dir, "pwsh.log")
	os.WriteFile(filepath.Join(win, "cygpath"), []byte("#!/bin/sh\n[ \"$1\" = -w ] || exit 1\nprintf 'W:%s' \"$2\" | tr / '\\\\'\n"), 0o755)
	os.WriteFile(filepath.Join(win, "pwsh"), []byte(fmt.Sprintf(`#!/bin/bash
# Expand-Archive -Path 'W:\...' -DestinationPath 'W:\...': Windows paths only.
echo "$*" >>%q
cmd=$3
src=$(sed -n "s/.*-Path '\([^']*\)'.*/\1/p" <<<"$cmd"); dst=$(sed -n "s/.*-DestinationPath '\([^']*\)'.*/\1/p" <<<"$cmd")
case "$src$dst" in *'/'*) echo "an MSYS path reached PowerShell: $cmd" >&2; exit 1 ;; esac
unix() { local p=${1#W:}; printf '%%s' "${p//\\//}"; }
exec /usr/bin/unzip -q "$(unix "$src")" -d "$(unix "$dst")"
`, psLog)), 0o755)
	winPath := filepath.Join(dir, "winpath")
	os.MkdirAll(winPath, 0o755)
	ents, _ := os.ReadDir(noCurl)
	for _, e := range ents {
		if e.Name() != "unzip" {
			os.Symlink(filepath.Join(noCurl, e.Name()), filepath.Join(winPath, e.Name()))
		}
	}
	os.Symlink(filepath.Join(win, "cygpath"), filepath.Join(winPath, "cygpath"))
	os.Symlink(filepath.Join(win, "pwsh"), filepath.Join(winPath, "pwsh"))
	res = runner(winPath, "Windows", "X64").run(map[string]string{"url": up.URL + "/health", "timeout": "5s"}, "v1.2.3")
	calls, _ := os.ReadFile(psLog)
	if res.code != 0 || !strings.Contains(string(calls), "Expand-Archive -Path 'W:") || !strings.HasSuffix(res.steps["install"]["path"], "healthctl.exe") {
		t.Errorf("windows: exit %d, pwsh calls %q, path %q\n%s", res.code, calls, res.steps["install"]["path"], res.out)
	}
}

// TestActionVersionFile: VERSION names one release (vX.Y.Z), and the
// release build refuses a tag that differs from it, so the Action pinned
// by any commit runs the release that commit records.
func TestActionVersionFile(t *testing.T) {
	b, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+\n$`).Match(b) {
		t.Errorf("VERSION %q: want one line vX.Y.Z", b)
	}
	gr, _ := os.ReadFile("../../.goreleaser.yaml")
	if !strings.Contains(string(gr), "scripts/check-version.sh {{ .Tag }} {{ .IsSnapshot }}") {
		t.Error(".goreleaser.yaml does not check VERSION against the tag")
	}
	for _, c := range []struct {
		tag, snapshot string
		ok            bool
	}{{strings.TrimSpace(string(b)), "false", true}, {"v9.9.9", "false", false}, {"v9.9.9", "true", true}} {
		err := exec.Command("bash", "../../scripts/check-version.sh", c.tag, c.snapshot).Run()
		if (err == nil) != c.ok {
			t.Errorf("check-version.sh %s %s: %v, want ok=%v", c.tag, c.snapshot, err, c.ok)
		}
	}
}

// TestActionLint runs actionlint (when installed: go install
// github.com/rhysd/actionlint/cmd/actionlint@latest) on a workflow that uses
// the action the way the docs do, reading every output: an output the
// action does not declare is "property ... is not defined".
func TestActionLint(t *testing.T) {
	lint, err := exec.LookPath("actionlint")
	if err != nil {
		gobin := filepath.Join(os.Getenv("HOME"), "go", "bin", "actionlint")
		if _, e := os.Stat(gobin); e != nil {
			stackfix.Require(t, stacksDir, "actionlint")
		}
		lint = gobin
	}
	dir := t.TempDir()
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, "action.yml"), b, 0o644)
	os.WriteFile(filepath.Join(dir, ".github", "workflows", "use.yml"), []byte(`on: pull_request
jobs:
  preview:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./
        id: health
        with:
          url: https://preview-${{ github.event.number }}.example.com/health
          timeout: 120s
          version: v1
      - if: always()
        run: echo "${{ steps.health.outputs.outcome }} ${{ steps.health.outputs.reason }} ${{ steps.health.outputs.exit-code }} ${{ steps.health.outputs.attempts }} ${{ steps.health.outputs.elapsed-ms }}"
`), 0o644)
	// actionlint finds its project by the .git directory.
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	cmd := exec.Command(lint, "-no-color", "-shellcheck=", "-pyflakes=")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}
