package targetsfile

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/target"
)

func TestParseTargets(t *testing.T) {
	src := `defaults:
  expect_status: 2xx
  headers: ["X-A: 1"]
  recover: false
targets:
  - name: "api\nv2"
    url: http://127.0.0.1:1/health
    started_at: 2026-01-02T15:04:05Z
    recover: true
    expect_json: status=ready
  - name: 42
    headers:
      - "X-B: 2"
    follow: 3
  - name: bare
`
	ts, err := ParseTargets("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 {
		t.Fatalf("%d targets", len(ts))
	}
	a, b, c := ts[0], ts[1], ts[2]
	if a.Name != "api\nv2" || a.URL == "" || a.StartedAt.IsZero() || !a.Recover || a.Probe["expect_json"].Str() != "status=ready" || a.Line != 6 {
		t.Fatalf("first: %+v", a)
	}
	if a.Probe["expect_status"].Str() != "2xx" || a.Probe["expect_status"].Line != 2 {
		t.Fatalf("defaults not applied: %+v", a.Probe)
	}
	if b.Name != "42" || b.Recover || b.Probe["headers"].Strings[0] != "X-B: 2" || b.Probe["follow"].Str() != "3" {
		t.Fatalf("second: %+v", b)
	}
	if c.URL != "" || c.Probe["headers"].Strings[0] != "X-A: 1" {
		t.Fatalf("third: %+v", c)
	}
	if got := Source("t.yaml", &b, "headers"); got != `t.yaml:12: target "42": headers` {
		t.Fatalf("Source = %s", got)
	}
}

func TestParseTargetsErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"targets:\n  - name: a\n  - name: a\n", `t.yaml:3: target "a": duplicate name (first at line 2)`},
		{"targets:\n  - name: a\n    urll: x\n", `t.yaml:3: target "a": unknown key "urll"`},
		{"targets:\n  - name: a\n    follow: lots\n", `t.yaml:3: target "a": follow: want an integer`},
		{"targets:\n  - name: a\n    recover: maybe\n", `t.yaml:3: target "a": recover: want true or false`},
		{"targets:\n  - name: a\n    headers: {a: b}\n", `t.yaml:3: target "a": headers: want a string or a list`},
		{"targets:\n  - name: a\n    started_at: yesterday\n", `t.yaml:3: target "a": started_at: "yesterday": want RFC 3339`},
		{"targets:\n  - url: http://x\n", `t.yaml:2: a target without name:`},
		{"defaults:\n  bogus: 1\ntargets: []\n", `t.yaml:2: defaults: unknown key "bogus"`},
		{"target:\n  - name: a\n", `t.yaml:1: unknown key "target"`},
		{"targets: [\n", `t.yaml: `},
		{"", `t.yaml: empty`},
		{"targets:\n  - name: a\n    name: b\n", `t.yaml:3: target "b": name: given twice`},
	} {
		_, err := ParseTargets("t.yaml", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want prefix %q", tc.src, err, tc.want)
		}
	}
}

func TestFileTargetInputSources(t *testing.T) {
	ts, err := ParseTargets("t.yaml", []byte("defaults:\n  read_timeout: 1s\ntargets:\n  - name: api\n    url: http://127.0.0.1:1/\n    expect_status: banana\n"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := ts[0].Input(target.Defaults(), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if in.ReadTimeout != time.Second {
		t.Fatalf("read_timeout from defaults: %v", in.ReadTimeout)
	}
	_, err = in.Build(func(string) string { return "" })
	if err == nil || !strings.HasPrefix(err.Error(), `t.yaml:6: target "api": expect_status "banana": `) {
		t.Fatalf("Build error %v does not name file, line, target and key", err)
	}
	if got := in.SourceOf("connect-timeout"); got != "--connect-timeout" {
		t.Fatalf("a flag's own value is named %q", got)
	}
	if got := in.SourceOf("read-timeout"); got != `t.yaml:2: target "api": read_timeout` {
		t.Fatalf("a default's value is named %q", got)
	}
}

func TestParseTargetsAliasesAndMerge(t *testing.T) {
	src := `defaults: &base
  expect_status: 2xx
  headers: &h ["X-A: 1"]
targets:
  - &api
    <<: *base
    name: api
    url: &u http://127.0.0.1:1/health
  - <<: [*api, *base]
    name: api2
    expect_status: "200"
    headers: *h
  - name: api3
    url: *u
`
	ts, err := ParseTargets("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 {
		t.Fatalf("%d targets", len(ts))
	}
	a, b, c := ts[0], ts[1], ts[2]
	if a.Name != "api" || a.URL != "http://127.0.0.1:1/health" || a.Probe["expect_status"].Str() != "2xx" {
		t.Fatalf("api: %+v", a)
	}
	if b.Name != "api2" || b.URL != a.URL || b.Probe["expect_status"].Str() != "200" || b.Probe["headers"].Strings[0] != "X-A: 1" {
		t.Fatalf("api2 (merged from api, own keys win): %+v", b)
	}
	if c.URL != a.URL {
		t.Fatalf("api3: url alias: %+v", c)
	}
}

func TestParseTargetsStartedAt(t *testing.T) {
	fixed := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return fixed }
	for _, tc := range []struct{ v, want string }{
		{"1764500000", ""},
		{"2026-11-30T12:30:00Z", ""}, // inside the slack: clock skew
		{"1764500000000", `t.yaml:3: target "a": started_at: "1764500000000": 13 digits: milliseconds or smaller units? want unix seconds`},
		{"300000000000", `12 digits: milliseconds`},
		{"2099-01-01T00:00:00Z", `started_at: "2099-01-01T00:00:00Z": 2099-01-01T00:00:00Z is 26329 days in the future: the target would stay inside its grace window until then`},
		{"1900-01-01T00:00:00Z", "year 1900: before 1970"},
	} {
		_, err := ParseTargets("t.yaml", []byte("targets:\n  - name: a\n    started_at: "+tc.v+"\n"))
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.v, err, tc.want)
		}
	}
}

func TestParseTargetsOneDocument(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"targets:\n  - name: a\n---\ntargets:\n  - name: b\n", "t.yaml:4: a second YAML document (after ---): want one document"},
		{"targets:\n  - name: a\n---\n: : garbage [\n", "t.yaml: several YAML documents (the second does not parse:"},
	} {
		_, err := ParseTargets("t.yaml", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, err, tc.want)
		}
	}
	if _, err := ParseTargets("t.yaml", []byte("---\ntargets:\n  - name: a\n")); err != nil {
		t.Errorf("one document with a leading ---: %v", err)
	}
}

// TestEntryKeysStayTheirOwn: an entry without probe keys shares the
// defaults' map, and one that sets a key gets a map of its own: no key of
// one entry reaches another or the defaults, in a file whose entries are
// let go as they are read and in one with anchors (&), where they are not.
func TestEntryKeysStayTheirOwn(t *testing.T) {
	for _, anchor := range []bool{false, true} {
		data := "defaults:\n  max_time: 5s\ntargets:\n" +
			"  - name: a\n    url: http://127.0.0.1:1/\n    expect_status: \"200\"\n" +
			"  - name: b\n    url: http://127.0.0.1:2/\n" +
			"  - name: c\n    url: http://127.0.0.1:3/\n    max_time: 1s\n" +
			"  - name: d\n    url: http://127.0.0.1:4/\n"
		if anchor {
			data = strings.Replace(data, "defaults:\n", "defaults:\n  headers: &h [\"X-A: 1\"]\n", 1) +
				"  - name: e\n    url: http://127.0.0.1:5/\n    headers: *h\n"
		}
		fts, err := ParseTargets("t.yaml", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, ft := range fts {
			var keys []string
			for k, v := range ft.Probe {
				keys = append(keys, k+"="+strings.Join(v.Strings, ","))
			}
			slices.Sort(keys)
			got[ft.Name] = strings.Join(keys, " ")
		}
		want := map[string]string{"a": "expect_status=200 max_time=5s", "b": "max_time=5s", "c": "max_time=1s", "d": "max_time=5s"}
		if anchor {
			for k, v := range want {
				want[k] = strings.TrimSpace("headers=X-A: 1 " + v)
			}
			want["a"] = "expect_status=200 headers=X-A: 1 max_time=5s"
			want["e"] = "headers=X-A: 1 max_time=5s"
		}
		for name, w := range want {
			if got[name] != w {
				t.Errorf("anchors %v: target %s: %q, want %q", anchor, name, got[name], w)
			}
		}
	}
}
