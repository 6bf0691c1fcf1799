package expect

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestJSONEqual: a value is compared as a user reading the body means it:
// numbers as numbers (however written), null as the word, integers past
// float64's precision digit by digit.
func TestJSONEqual(t *testing.T) {
	body := `{"s":"ready","e":"","n":3,"f":1.50,"x":1e3,"z":-0,"big":12345678901234567890,
		"t":true,"no":false,"nil":null,"sn":"null","s3":"3","o":{"a":1},"a":[1,2]}`
	cases := []struct {
		path, value string
		want        bool
	}{
		{"s", "ready", true}, {"s", "Ready", false}, {"e", "", true}, {"e", "null", false},
		{"n", "3", true}, {"n", "3.0", true}, {"n", "03", false}, {"n", "+3", false}, {"n", "4", false}, {"n", "three", false},
		{"f", "1.50", true}, {"f", "1.5", true}, {"f", "1.500", true}, {"f", "1.51", false},
		{"x", "1000", true}, {"x", "1e3", true}, {"x", "1E+3", true}, {"x", "1001", false},
		{"z", "0", true}, {"z", "-0", true}, {"z", "1", false},
		{"big", "12345678901234567890", true}, {"big", "12345678901234567891", false},
		{"t", "true", true}, {"t", "True", false}, {"no", "false", true},
		{"nil", "null", true}, {"nil", "", false}, {"sn", "null", true},
		{"s3", "3", true}, {"s3", "3.0", false},
		{"o", `{"a":1}`, true}, {"a", "[1,2]", true},
	}
	for _, c := range cases {
		got := gjson.Get(body, c.path)
		if !got.Exists() {
			t.Fatalf("%s missing", c.path)
		}
		if jsonEqual(got, c.value) != c.want {
			t.Errorf("%s=%s: %v, want %v (body has %s)", c.path, c.value, !c.want, c.want, got.Raw)
		}
	}
	if s := jsonText(gjson.Get(body, "f")); s != "1.50" {
		t.Errorf("jsonText(f) = %q, want the body's 1.50", s)
	}
	if s := jsonText(gjson.Get(body, "nil")); s != "null" {
		t.Errorf("jsonText(nil) = %q, want null", s)
	}
}

// TestIsJSONNumber holds the hand-written grammar to RFC 8259's, as the
// regular expression of it says.
func TestIsJSONNumber(t *testing.T) {
	re := regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	for _, s := range []string{"", "0", "-0", "00", "01", "1", "-", "12", "1.", "1.5", ".5", "1.50", "1e", "1e3", "1E+3",
		"1e-3", "1e+", "-1.5e10", "+1", "1.5.5", "1ee3", "0x10", "Inf", "NaN", "1_000", " 1", "1 ", "--1", "0.0e0"} {
		if got, want := isJSONNumber(s), re.MatchString(s); got != want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestDuplicateKeys: an object that names a key twice is read as
// JSON.parse, jq, Python and encoding/json read it — the last value
// counts — and a failure says the body named a key twice.
func TestDuplicateKeys(t *testing.T) {
	many := `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k3":"three"}`
	cases := []struct {
		body, cond string
		fail       string // "" when the condition holds
	}{
		{`{"status":"down","status":"ok"}`, "status=ok", ""},
		{`{"status":"ok","status":"down"}`, "status=ok", `JSON status is "down", want "ok" (the body names a key twice`},
		{`{"status":"down","st\u0061tus":"ok"}`, "status=ok", ""},
		{`{"a":{"b":1,"c":0,"b":2}}`, "a.b=2", ""},
		{`{"a":{"b":1},"a":{"c":2}}`, "a.b=1", `JSON path a.b is missing (wanted "1") (the body names a key twice`},
		{`{"checks":[{"name":"db","ok":false,"ok":true}]}`, `checks.#(name=="db").ok=true`, ""},
		{`[{"a":1,"a":2},{"a":3}]`, "0.a=2", ""},
		{many, "k3=three", ""},
		{many, "k18=18", ""},
		// The same key in different objects is no duplicate: no note.
		{`{"a":1,"b":{"a":2},"c":[{"a":3}]}`, "b.a=3", `JSON b.a is "2", want "3"`},
		{`{"a":1,"b":{"a":2},"c":[{"a":3}]}`, "c.0.a=3", ""},
	}
	for _, c := range cases {
		path, value, _ := strings.Cut(c.cond, "=")
		if strings.HasPrefix(c.cond, "checks") {
			path, value = `checks.#(name=="db").ok`, "true"
		}
		e := &Expectations{JSON: []JSONExpect{{Path: path, Value: value}}}
		got := e.Check(nil, Body{JSON: []byte(c.body)}, 1<<20)
		switch {
		case c.fail == "" && got != "":
			t.Errorf("%s on %s: %q, want it to hold", c.cond, c.body, got)
		case c.fail != "" && !strings.HasPrefix(got, c.fail):
			t.Errorf("%s on %s: %q, want %q…", c.cond, c.body, got, c.fail)
		case c.fail != "" && !strings.Contains(c.fail, "twice") && strings.Contains(got, "twice"):
			t.Errorf("%s on %s: %q names a duplicate where there is none", c.cond, c.body, got)
		}
	}
	// A plain path is walked at any size; a query past
	// MaxDuplicateRewrite is read as gjson reads it (the first counts).
	long := `{"status":"down","checks":[{"name":"db","ok":false,"ok":true}],"pad":"` + strings.Repeat("x", MaxDuplicateRewrite) + `","status":"ok"}`
	e := &Expectations{JSON: []JSONExpect{{Path: "status", Value: "ok"}}}
	if got := e.Check(nil, Body{JSON: []byte(long)}, 16<<20); got != "" {
		t.Errorf("long body, plain path: %q, want it to hold", got)
	}
	e = &Expectations{JSON: []JSONExpect{{Path: `checks.#(name=="db").ok`, Value: "false"}}}
	if got := e.Check(nil, Body{JSON: []byte(long)}, 16<<20); got != "" {
		t.Errorf("long body, query: %q, want gjson's reading (the first ok)", got)
	}
	if got := string(lastWins(nil, gjson.Parse(`{"a":1,"b":[{"x":1,"x":[2]}],"a":"z","c":null}`))); got != `{"a":"z","b":[{"x":[2]}],"c":null}` {
		t.Errorf("lastWins = %s", got)
	}
}

// BenchmarkCheckJSON: one --expect-json condition on a health document,
// as a sweep checks it once a target, by a plain path (walked) and by a
// query (`stat?s`: looked up in the duplicate-free copy when there is
// one); and on the costliest bodies a hostile server can send.
func BenchmarkCheckJSON(b *testing.B) {
	for _, c := range []struct{ name, body string }{
		{"unique", `{"status":"ready","checks":{"db":"ok","cache":"ok"},"version":3,"live":true,"items":["a","b"],"ratio":1.50}`},
		{"duplicate", `{"status":"starting","checks":{"db":"ok","cache":"ok"},"version":3,"live":true,"items":["a","b"],"status":"ready"}`},
		{"hostile-64KiB", hostileDuplicates(MaxDuplicateRewrite)},
		{"hostile-8MiB", hostileDuplicates(int(MaxJSONBody))},
	} {
		for _, q := range []struct{ kind, path string }{{"plain", "status"}, {"query", "stat?s"}} {
			b.Run(c.name+"/"+q.kind, func(b *testing.B) {
				e := &Expectations{JSON: []JSONExpect{{Path: q.path, Value: "ready"}}}
				body := Body{JSON: []byte(c.body)}
				b.ReportAllocs()
				for b.Loop() {
					if msg := e.Check(nil, body, 16<<20); msg != "" {
						b.Fatal(msg)
					}
				}
			})
		}
	}
}

// hostileDuplicates is the costliest document of n bytes for the
// duplicate pass: as many short distinct keys as fit, then the first one
// again, then the status.
func hostileDuplicates(n int) string {
	var b strings.Builder
	b.WriteString(`{"k0":0`)
	for i := 1; b.Len() < n-64; i++ {
		fmt.Fprintf(&b, `,"%x":0`, i)
	}
	b.WriteString(`,"k0":1,"status":"ready"}`)
	return b.String()
}
