package main

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
)

// TestActionNeverWritesRawInputs: the Action's job summary shows the URLs
// as healthctl redacts them, never the raw url input (a password, a
// ?token=, a ?client_secret=); its log holds them only as ::add-mask::
// commands (which the runner consumes), the derived Basic credentials
// included, for a passing and a failing wait.
func TestActionNeverWritesRawInputs(t *testing.T) {
	besideScripts(t)
	stackfix.Require(t, stacksDir, "bash", "curl", "tar", "sha256sum", "base64")
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	hc, err := exec.LookPath("healthctl")
	if err != nil {
		t.Fatal(err)
	}
	rel := newFakeRelease(t, hc)
	dir := t.TempDir()
	r := &actionRunner{t: t, a: a, dir: dir, summary: filepath.Join(dir, "summary.md")}
	r.env = append(os.Environ(),
		"HEALTHCTL_DNS_SERVER=127.0.0.1:9",
		"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "RUNNER_TOOL_CACHE="+filepath.Join(dir, "toolcache"), "RUNNER_TEMP="+dir,
		"HEALTHCTL_ACTION_RELEASES_URL="+rel.srv.URL+"/releases",
		"HEALTHCTL_ACTION_PROXY_URL="+rel.srv.URL+"/proxy",
	)
	up, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Body: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	closed, err := fixture.NewClosedPort(t)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"SEKRITupw", "SEKRITtok", "SEKRITcs", "SEKRITdash", base64.StdEncoding.EncodeToString([]byte("bob:SEKRITupw")),
		base64.StdEncoding.EncodeToString([]byte("amy:SEKRITdash"))}
	for _, tc := range []struct{ url, args string }{
		{strings.Replace(up.URL, "://", "://bob:SEKRITupw@", 1) + "/health?token=SEKRITtok&client_secret=SEKRITcs", "-u\namy:SEKRITdash"},
		{strings.Replace(closed.URL(), "://", "://bob:SEKRITupw@", 1) + "/health?Token=SEKRITtok&x=1\n" + up.URL + "/h?client_secret=SEKRITcs", "--timeout\n300ms\n--user=amy:SEKRITdash"},
	} {
		os.Remove(r.summary)
		res := r.run(map[string]string{"url": tc.url, "args": tc.args}, "v1.2.3")
		summary, _ := os.ReadFile(r.summary)
		if !strings.Contains(string(summary), "***") {
			t.Errorf("summary shows no redacted URL:\n%s", summary)
		}
		masked := map[string]bool{}
		var log []string
		for _, l := range strings.Split(res.out, "\n") {
			if v, ok := strings.CutPrefix(l, "::add-mask::"); ok {
				masked[v] = true
				continue
			}
			log = append(log, l)
		}
		for _, s := range secrets {
			if strings.Contains(string(summary), s) {
				t.Errorf("the job summary holds %q:\n%s", s, summary)
			}
			if strings.Contains(strings.Join(log, "\n"), s) {
				t.Errorf("the log holds %q outside ::add-mask::", s)
			}
			if !masked[s] {
				t.Errorf("%q is not masked (masked: %v)", s, masked)
			}
		}
	}
}
