package layout

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/healthctl/healthctl/"

// pure are the rooms that compute and do no I/O of their own: they import
// only each other (and crash, the one panic rule) from healthctl, however
// deep the imports go.
var pure = []string{
	"internal/classify", "internal/policy", "internal/expect", "internal/redact",
	"internal/jsondepth", "internal/yamlsafe", "internal/proxyenv", "internal/follow",
	"internal/tlsinfo", "internal/grpchealth", "internal/rediswire", "internal/pgwire",
	"internal/amqpwire", "internal/mysqlwire", "internal/dnswire", "internal/icmpwire",
	// The scheme table and the options of one probe: data, and the URL
	// rules of each row.
	"internal/scheme",
	"internal/source", "internal/words", "internal/shutdown", "internal/manifest",
	"internal/drain/evidence", "internal/drain/judge",
	"internal/exitcode", "internal/crash", "internal/version",
}

// commandSide may import Cobra, pflag and viper; nothing below them may.
var commandSide = []string{"cmd/healthctl", "internal/cmd/", "internal/cli", "internal/config", "scripts/"}

// testOnly are imported by tests, benchmarks and the demo's fixtures only.
// A room here covers the packages below it: internal/fixture is the core
// of the fault catalogue and internal/fixture/... its packages by concept
// (pkifix, tlsfix, dnsfix, proxyfix, hostile, wirefix, stackfix, peers,
// grpcsrv, h2fixture).
var testOnly = []string{"internal/fixture", "internal/truthclient", "internal/kubedocs", "internal/cli/clitest"}

type pkg struct {
	path    string
	imports []string // direct, healthctl's and the CLI libraries'
	deps    []string // transitive, healthctl's
}

func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list: %v: %s", err, stderr.String())
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			continue
		}
		p := pkg{path: strings.TrimPrefix(parts[0], module)}
		for _, im := range strings.Fields(parts[1]) {
			if strings.HasPrefix(im, module) || strings.HasPrefix(im, "github.com/spf13/") {
				p.imports = append(p.imports, strings.TrimPrefix(im, module))
			}
		}
		for _, d := range strings.Fields(parts[2]) {
			if strings.HasPrefix(d, module) {
				p.deps = append(p.deps, strings.TrimPrefix(d, module))
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func under(path string, rooms []string) bool {
	for _, r := range rooms {
		if path == r || (strings.HasSuffix(r, "/") && strings.HasPrefix(path, r)) || strings.HasPrefix(path, r+"/") {
			return true
		}
	}
	return false
}

// TestImportsRunOneWay: the arrows of STYLE.md.
func TestImportsRunOneWay(t *testing.T) {
	pkgs := list(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		if slices.Contains(pure, p.path) {
			for _, d := range p.deps {
				if !slices.Contains(pure, d) {
					t.Errorf("%s is pure but depends on %s", p.path, d)
				}
			}
		}
		for _, im := range p.imports {
			switch {
			case strings.HasPrefix(im, "github.com/spf13/") && !under(p.path, commandSide):
				t.Errorf("%s imports %s: only the command side (%v) may", p.path, im, commandSide)
			case strings.HasPrefix(im, "internal/cmd/") && !(p.path == "cmd/healthctl" || p.path == "internal/cmd/root" || strings.HasPrefix(p.path, "scripts/")):
				t.Errorf("%s imports the command %s: only the root builds the tree", p.path, im)
			case (im == "internal/cli" || im == "internal/config") && !under(p.path, commandSide):
				t.Errorf("%s imports %s: the rooms below the commands take their options, they do not read flags", p.path, im)
			case under(im, testOnly) && !under(p.path, append([]string{"scripts/"}, testOnly...)):
				t.Errorf("%s imports %s, which is for tests only", p.path, im)
			}
		}
		if p.path == "cmd/healthctl" {
			for _, d := range p.deps {
				if under(d, testOnly) {
					t.Errorf("the healthctl binary depends on %s, which is for tests only", d)
				}
			}
		}
		switch p.path {
		case "internal/output", "internal/words", "internal/source":
			if len(p.imports) > 0 {
				t.Errorf("%s imports %v: it is shared by every room and imports none", p.path, p.imports)
			}
		case "internal/render":
			for _, im := range p.imports {
				if !slices.Contains([]string{"internal/output", "internal/report", "internal/exitcode"}, im) {
					t.Errorf("internal/render imports %s: a format knows results, not commands", im)
				}
			}
		case "internal/cli", "internal/target":
			// An option's route: a command calls cli once, cli reads each
			// value's source from its flag (the keys in internal/source)
			// and hands target the names with the values; target validates.
			// Naming a value never goes back through the loader that set it.
			if slices.Contains(p.imports, "internal/config") {
				t.Errorf("%s imports internal/config: the loader writes a value's source, the command side reads it (internal/source's keys)", p.path)
			}
			// The table target reads is pure data (internal/scheme):
			// parsing what the user typed never imports the exchanges.
			if p.path == "internal/target" && under("internal/probe", p.deps) {
				t.Errorf("internal/target depends on internal/probe: it reads the scheme table (internal/scheme), not the exchanges")
			}
		case "internal/blackbox", "internal/blackbox/oauth2":
			// A module is configuration for the listener's /probe: the
			// service calls it, never the other way.
			for _, d := range p.deps {
				if under(d, []string{"internal/listen", "internal/watch", "internal/metrics", "internal/report", "internal/state"}) {
					t.Errorf("%s depends on %s: blackbox's modules are below the service that serves them", p.path, d)
				}
			}
		case "internal/probe", "internal/probe/session", "internal/probe/httpprobe", "internal/probe/grpcprobe",
			"internal/probe/streamprobe", "internal/probe/dbprobe", "internal/probe/result", "internal/probe/writebehind":
			for _, d := range p.deps {
				if under(d, []string{"internal/target", "internal/wait", "internal/watch", "internal/drain", "internal/report", "internal/render", "internal/state", "internal/metrics"}) {
					t.Errorf("%s depends on %s: probe is below every loop and renderer", p.path, d)
				}
				// The shared machinery knows no exchange: each exchange
				// package imports it, and the front door picks among them.
				if p.path != "internal/probe" && !strings.HasSuffix(p.path, "probe") && under(d, []string{"internal/probe/httpprobe", "internal/probe/grpcprobe", "internal/probe/streamprobe", "internal/probe/dbprobe"}) {
					t.Errorf("%s depends on the exchange package %s: the session is below every exchange", p.path, d)
				}
			}
		}
	}
}

// TestTheHouseStaysSmall: the sizes issue 40 set. cmd/healthctl is wiring
// (under 300 lines of code beside its tests); docs/benchmarks.md is the
// summary and the method, its history in git (300 lines at most).
func TestTheHouseStaysSmall(t *testing.T) {
	lines := func(path string) int {
		b, err := os.ReadFile(filepath.Join("../..", path))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte("\n"))
	}
	mains, err := filepath.Glob("../../cmd/healthctl/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var code int
	for _, m := range mains {
		if !strings.HasSuffix(m, "_test.go") {
			code += lines(strings.TrimPrefix(m, "../../"))
		}
	}
	if code >= 300 {
		t.Errorf("cmd/healthctl holds %d lines of code beside its tests, want under 300: move what is not wiring into its room", code)
	}
	if n := lines("docs/benchmarks.md"); n > 300 {
		t.Errorf("docs/benchmarks.md is %d lines, want 300 at most: the summary table and the method, the diary in git", n)
	}
}
