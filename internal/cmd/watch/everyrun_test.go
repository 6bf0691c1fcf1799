package watchcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/render"
)

// usersTargets writes n targets at hostport in the shapes people write, in
// turn: block style, a flow mapping with a quoted URL, a commented entry
// with quoted scalars and a header, and a block entry with a header list
// and an expectation.
func usersTargets(n int, hostport string) []byte {
	var b bytes.Buffer
	b.WriteString("# the fleet, one entry per service\ndefaults:\n  max_time: 5s\ntargets:\n")
	for i := range n {
		u := fmt.Sprintf("http://%s/svc/%d/health", hostport, i)
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "  - name: svc-%d\n    url: %s\n", i, u)
		case 1:
			fmt.Fprintf(&b, "  - {name: svc-%d, url: %q}\n", i, u)
		case 2:
			fmt.Fprintf(&b, "  # team %d\n  - name: \"svc-%d\"\n    url: '%s'   # behind the LB\n    headers: [\"X-Probe: 1\"]\n", i%7, i, u)
		case 3:
			fmt.Fprintf(&b, "  - name: svc-%d\n    url: \"%s\"\n    headers:\n      - \"Host: svc-%d.internal\"\n    expect_status: 2xx\n", i, u, i)
		}
	}
	return b.Bytes()
}

// TestOnceStateEveryRun: `watch --once --state --prom-file` over a fleet
// past the size the old state admission refused (a cap on the state file's
// targets derived from the run's own memory limit: from ~16,300 targets the
// second run exited 2 on the file the first had written) runs, with the
// memory policy main sets, three times over the same state: every run
// exits with the sweep's own code (0: all pass) and classifies every
// target, and the state holds them all. Real probes against one loopback
// listener; the targets in users' shapes (block, flow, quoted, comments,
// headers).
func TestOnceStateEveryRun(t *testing.T) {
	const n = 17500
	if testing.Short() {
		t.Skip("17,500 loopback probes, three times")
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }),
		ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.yaml")
	if err := os.WriteFile(file, usersTargets(n, l.Addr().String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The process's own memory policy, as main passes it (restored after:
	// it is the test binary's too).
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	gogc := debug.SetGCPercent(100) // read (-1 would turn the collector off)
	debug.SetGCPercent(gogc)
	defer debug.SetGCPercent(gogc)
	state := filepath.Join(dir, "state.json")
	for run := 1; run <= 3; run++ {
		fk := clitest.New(nil, classify.Pass)
		fk.F.SetMemoryLimit, fk.F.SetGCPercent = debug.SetMemoryLimit, debug.SetGCPercent
		fk.F.Format = render.JSON
		fk.F.Prober = probe.Run
		err := Run(context.Background(), fk.F, parse(t, "--once", "--concurrency", "64", "--targets", file,
			"--state", state, "--prom-file", filepath.Join(dir, "metrics.prom")))
		if code := clitest.Code(err); code != exitcode.Pass {
			t.Fatalf("run %d: exit %d (%v); stderr: %s", run, code, err, fk.Err.String())
		}
		out := strings.TrimSpace(fk.Out.String())
		var last struct {
			Sweep struct{ Targets, Pass int } `json:"sweep"`
		}
		if err := json.Unmarshal([]byte(out[strings.LastIndexByte(out, '\n')+1:]), &last); err != nil {
			t.Fatalf("run %d: no sweep line: %v", run, err)
		}
		if last.Sweep.Targets != n || last.Sweep.Pass != n {
			t.Fatalf("run %d: sweep %+v, want %d targets, all passed", run, last.Sweep, n)
		}
		data, err := os.ReadFile(state)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Sweeps  int64                      `json:"sweeps"`
			Targets map[string]json.RawMessage `json:"targets"`
		}
		if err := json.Unmarshal(data, &st); err != nil || len(st.Targets) != n || st.Sweeps != int64(run) {
			t.Fatalf("run %d: state: %d targets, %d sweeps (%v)", run, len(st.Targets), st.Sweeps, err)
		}
	}
}

// TestSharedTemplateErrorsNameTheEntry: entries that set the same options
// share one template (built for the first), and an entry's URL that the
// options refuse is still named by its own lines, not the first entry's.
func TestSharedTemplateErrorsNameTheEntry(t *testing.T) {
	file := filepath.Join(t.TempDir(), "targets.yaml")
	data := "targets:\n" +
		"  - {name: a, url: \"http://127.0.0.1:1/\", ipv4: true, headers: [\"X-A: 1\"]}\n" +
		"  - {name: b, url: \"http://127.0.0.1:2/\", headers: [\"X-A: 1\"], ipv4: true}\n" +
		"  - name: c\n    ipv4: true\n    headers: [\"X-A: 1\"]\n    url: \"http://[::1]:3/\"\n"
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	fk := clitest.New(nil, classify.Pass)
	opts := parse(t, "--once", "--targets", file)
	targets, own, err := buildTargets(fk.F, opts)
	if err == nil || !strings.Contains(err.Error(), `targets.yaml:5: target "c": ipv4 asks`) {
		t.Fatalf("error %v, want one naming target c's ipv4 (line 5)", err)
	}
	// Without c, a and b share one template.
	if err := os.WriteFile(file, []byte(data[:strings.Index(data, "  - name: c")]), 0o644); err != nil {
		t.Fatal(err)
	}
	if targets, own, err = buildTargets(fk.F, opts); err != nil || len(targets) != 2 || own != 1 {
		t.Fatalf("%d targets, %d templates, %v; want 2 sharing 1", len(targets), own, err)
	}
	for _, tg := range targets {
		o, err := tg.Build()
		if err != nil || o.Header.Get("X-A") != "1" || o.Network != "tcp4" || o.URL.Host != strings.TrimPrefix(strings.TrimSuffix(tg.URL, "/"), "http://") {
			t.Fatalf("target %s: %+v %v", tg.Name, o, err)
		}
	}
}

// TestURLSecretsShareATemplate: entries whose URLs differ by a query
// string or userinfo share the flags' template (a query string of its own
// must not cost a template a target); a secret in one's query (by name) or
// its password is redacted in that target's output and in no other's.
func TestURLSecretsShareATemplate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "targets.yaml")
	data := "targets:\n" +
		"  - {name: a, url: \"http://127.0.0.1:1/health?full=1&env=a\"}\n" +
		"  - {name: b, url: \"http://127.0.0.1:2/health?env=b&token=s3cret-b\"}\n" +
		"  - {name: c, url: \"http://user:pa55-c@127.0.0.1:3/health\"}\n" +
		"  - {name: d, url: \"http://127.0.0.1:4/health#access_token=s3cret-d\"}\n"
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	fk := clitest.New(nil, classify.Pass)
	targets, own, err := buildTargets(fk.F, parse(t, "--once", "--targets", file))
	if err != nil || len(targets) != 4 || own != 0 {
		t.Fatalf("%d targets, %d templates built for entries, %v; want 4 on the flags'", len(targets), own, err)
	}
	secrets := map[string]string{"b": "s3cret-b", "c": "pa55-c", "d": "s3cret-d"}
	wantURL := map[string]string{
		"a": "http://127.0.0.1:1/health?full=1&env=a",
		"b": "http://127.0.0.1:2/health?env=b&token=***",
		"c": "http://user:***@127.0.0.1:3/health",
		"d": "http://127.0.0.1:4/health#access_token=***",
	}
	for round := range 2 {
		for _, tg := range targets {
			o, err := tg.Build()
			if err != nil {
				t.Fatal(err)
			}
			// The first build's display is the one rendered when the file
			// was read, still valid for its options (their URL, redactor
			// and generation): the probe does not render it again.
			if d := o.Display; round == 0 && (d.For != o.URL || d.By != o.Redactor || d.Gen != o.Redactor.Generation() || d.Text != wantURL[tg.Name]) {
				t.Errorf("target %s: first build's display %+v does not hold for its options", tg.Name, d)
			}
			if tg.URL != wantURL[tg.Name] || o.Redactor.URL(o.URL) != wantURL[tg.Name] {
				t.Errorf("round %d, target %s: URL %q, display %q, want %q", round, tg.Name, tg.URL, o.Redactor.URL(o.URL), wantURL[tg.Name])
			}
			for name, sec := range secrets {
				if got := o.Redactor.String("said " + sec); (got == "said "+sec) != (name != tg.Name) {
					t.Errorf("round %d, target %s's redactor turns %s's secret into %q", round, tg.Name, name, got)
				}
			}
		}
	}
}

// TestOwnHeadersShareATemplate: entries whose other options are the same
// share one template however their headers differ (each its own Host, as
// virtual hosts behind one ingress are written), and each probe's options
// carry that entry's headers alone; a secret header's entry shares it too,
// its secret registered with a redactor of its own; one whose headers sit
// beside a body gets a template of its own (the body's Content-Type
// default depends on the lines), and a bad line is named by its own entry.
func TestOwnHeadersShareATemplate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "targets.yaml")
	data := "defaults:\n  max_time: 5s\ntargets:\n" +
		"  - {name: a, url: \"http://127.0.0.1:1/\", headers: [\"Host: a.invalid\", \"X-Team: t1\"]}\n" +
		"  - name: b\n    url: \"https://127.0.0.1:2/\"\n    headers:\n      - \"Host: b.invalid\"\n" +
		"  - {name: c, url: \"http://127.0.0.1:3/\", headers: [\"X-Empty:\"]}\n" +
		"  - {name: d, url: \"http://127.0.0.1:4/\"}\n" +
		"  - {name: e, url: \"http://127.0.0.1:5/\", headers: [\"Authorization: Bearer s3cret-e\"]}\n" +
		"  - {name: f, url: \"http://127.0.0.1:6/\", data: x, headers: [\"Content-Type: text/plain\"]}\n"
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	fk := clitest.New(nil, classify.Pass)
	opts := parse(t, "--once", "--targets", file, "-H", "X-Flag: 1")
	targets, own, err := buildTargets(fk.F, opts)
	if err != nil || len(targets) != 6 {
		t.Fatalf("%d targets, %v", len(targets), err)
	}
	// a, b, c and e share one (their headers replace the flag's -H); d
	// has the defaults' over the flags'; f one of its own, after the one
	// without its headers (a body: no sharing).
	if own != 4 {
		t.Fatalf("%d templates built for entries, want 4", own)
	}
	want := map[string]struct {
		host, sni string
		header    http.Header
	}{
		"a": {"a.invalid", "", http.Header{"X-Team": {"t1"}}},
		"b": {"b.invalid", "b.invalid", http.Header{}},
		"c": {"", "", http.Header{"X-Empty": {""}}},
		"d": {"", "", http.Header{"X-Flag": {"1"}}},
		"e": {"", "", http.Header{"Authorization": {"Bearer s3cret-e"}}},
		"f": {"", "", http.Header{"Content-Type": {"text/plain"}}},
	}
	for round := range 2 { // the first build and a later one (a long-running watch)
		for _, tg := range targets {
			o, err := tg.Build()
			if err != nil {
				t.Fatal(err)
			}
			w := want[tg.Name]
			if o.Host != w.host || fmt.Sprint(o.Header) != fmt.Sprint(w.header) {
				t.Errorf("round %d, target %s: Host %q header %v, want %q %v", round, tg.Name, o.Host, o.Header, w.host, w.header)
			}
			if o.TLSConfig.ServerName != w.sni {
				t.Errorf("round %d, target %s: SNI %q, want %q", round, tg.Name, o.TLSConfig.ServerName, w.sni)
			}
			if got := o.Redactor.String("Bearer s3cret-e"); (got == "Bearer s3cret-e") != (tg.Name != "e") {
				t.Errorf("target %s's redactor turns e's secret into %q", tg.Name, got)
			}
		}
	}
	// e's redactor is its own: the template's holds no secret of e's.
	if o, _ := targets[0].Build(); o.Redactor.String("s3cret-e") != "s3cret-e" {
		t.Errorf("the shared redactor holds e's secret")
	}
	// A bad line in a shared entry's headers is named by that entry.
	bad := data + "  - {name: g, url: \"http://127.0.0.1:7/\", headers: [\"Host: a b\"]}\n"
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = buildTargets(fk.F, opts)
	if err == nil || !strings.Contains(err.Error(), `targets.yaml:13: target "g": headers: Host: "a b" is not a valid host`) {
		t.Fatalf("error %v, want one naming target g's headers (line 13)", err)
	}
}
