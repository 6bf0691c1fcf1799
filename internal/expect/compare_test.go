package expect

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestParseJSON(t *testing.T) {
	for _, c := range []struct {
		in, path, op, value string
		err                 string
	}{
		{"status=ready", "status", "=", "ready", ""},
		{`checks.#(name=="db").ok=true`, `checks.#(name=="db").ok`, "=", "true", ""},
		{`checks.#(name=="a=b").ok=true`, `checks.#(name=="a=b").ok`, "=", "true", ""},
		{`a\=b=c`, `a\=b`, "=", "c", ""},
		{`x=a=b`, "x", "=", "a=b", ""},
		{`x=a<b`, "x", "=", "a<b", ""},
		{`items.#(n>=2)#.id=[1]`, `items.#(n>=2)#.id`, "=", "[1]", ""},
		{"status!=DOWN", "status", "!=", "DOWN", ""},
		{"queue.depth<100", "queue.depth", "<", "100", ""},
		{"queue.depth<=100", "queue.depth", "<=", "100", ""},
		{"free>1.5e9", "free", ">", "1.5e9", ""},
		{"uptime>=-3", "uptime", ">=", "-3", ""},
		{"x!y=1", "x!y", "=", "1", ""},
		{"status", "", "", "", "want PATH=VALUE"},
		{`checks.#(name=="db").ok`, "", "", "", "want PATH=VALUE"},
		{"=ready", "", "", "", "want PATH=VALUE"},
		{"depth<lots", "", "", "", `< compares numbers: want a number after it, got "lots"`},
		{"depth>=", "", "", "", `>= compares numbers`},
	} {
		j, err := ParseJSON(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseJSON(%q) = %+v, %v; want an error %q", c.in, j, err, c.err)
			}
			continue
		}
		if err != nil || j.Path != c.path || j.op() != c.op || j.Value != c.value {
			t.Errorf("ParseJSON(%q) = %q %q %q, %v; want %q %q %q", c.in, j.Path, j.op(), j.Value, err, c.path, c.op, c.value)
		}
		if j.String() != c.in {
			t.Errorf("ParseJSON(%q).String() = %q", c.in, j.String())
		}
	}
}

// The bodies of health endpoints people probe: @godaddy/terminus's error
// answer and Spring Boot actuator's.
const (
	terminusBody = `{"status":"error","info":{"db":{"status":"up"}},"error":{"redis":{"status":"down","message":"ECONNREFUSED"}},"details":{"db":{"status":"up"},"redis":{"status":"down"}}}`
	actuatorUp   = `{"status":"UP","components":{"db":{"status":"UP","details":{"database":"PostgreSQL"}},"diskSpace":{"status":"UP","details":{"total":1000,"free":600,"threshold":100}},"ping":{"status":"UP"}}}`
	actuatorDisk = `{"status":"UP","components":{"db":{"status":"UP"},"diskSpace":{"status":"OUT_OF_SERVICE","details":{"total":1000,"free":40,"threshold":100}},"ping":{"status":"UP"}}}`
)

// TestJSONComparisons: the comparisons beyond equality and "every element
// of a list", over real health bodies.
func TestJSONComparisons(t *testing.T) {
	for _, c := range []struct {
		body, cond string
		want       string // "" holds; else a part of the message
	}{
		{terminusBody, "status!=error", `JSON status is "error", want anything but "error"`},
		{terminusBody, "status!=down", ""},
		{terminusBody, "details.@values.#.status=up", `JSON details.@values.#.status: element 1 is "down", want every element =up`},
		{terminusBody, "info.@values.#.status=up", ""},
		{actuatorUp, "components.@values.#.status=UP", ""},
		{actuatorDisk, "components.@values.#.status=UP", `element 1 is "OUT_OF_SERVICE"`},
		{actuatorDisk, "components.@values.#.status!=DOWN", ""},
		{actuatorUp, "components.diskSpace.details.free>100", ""},
		{actuatorDisk, "components.diskSpace.details.free>100", "JSON components.diskSpace.details.free is 40, want >100"},
		{actuatorDisk, "components.diskSpace.details.free>=40", ""},
		{actuatorDisk, "components.diskSpace.details.free<40", "is 40, want <40"},
		{actuatorDisk, "components.diskSpace.details.free<=40", ""},
		{actuatorDisk, "components.diskSpace.details.free<40.5", ""},
		{actuatorDisk, "status<1", `JSON status is "UP", not a number (want <1)`},
		{actuatorDisk, "missing.free<1", "JSON path missing.free is missing (wanted missing.free<1)"},
		{`{"checks":[]}`, "checks.#.ok=true", "JSON checks.#.ok is an empty list (want every element =true)"},
		{`{"checks":[{"ms":3},{"ms":12}]}`, "checks.#.ms<10", "element 1 is \"12\", want every element <10"},
		{`{"checks":[{"ms":3},{"ms":9}]}`, "checks.#.ms<10", ""},
		// A list compared whole, as before: equality to its text.
		{`{"items":[{"n":1,"id":1},{"n":3,"id":7}]}`, "items.#(n>=2)#.id=[7]", ""},
		{`{"items":[{"n":3,"id":7},{"n":4,"id":7}]}`, "items.#(n>=2)#.id=7", ""},
	} {
		j, err := ParseJSON(c.cond)
		if err != nil {
			t.Fatalf("%s: %v", c.cond, err)
		}
		e := &Expectations{JSON: []JSONExpect{j}}
		got := e.Check(nil, scanOf(e, c.body), 1<<16)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s on %s: %q, want %q", c.cond, c.body, got, c.want)
		}
	}
}

func scanOf(e *Expectations, body string) Body {
	s := e.NewScan()
	defer s.Abort()
	s.Write([]byte(body))
	return s.Finish()
}

// TestNegativeConditions: --expect-body-not fails a body that matches;
// --expect-header-not fails a header value that matches, and a missing
// header passes it.
func TestNegativeConditions(t *testing.T) {
	h := http.Header{"X-Status": {"ok", "degraded: disk"}}
	for _, c := range []struct {
		name string
		e    Expectations
		body string
		want string
	}{
		{"body not matched", Expectations{BodyNotRegex: []*regexp.Regexp{regexp.MustCompile(`"status":"(DOWN|error)"`)}}, actuatorUp, ""},
		{"body matched", Expectations{BodyNotRegex: []*regexp.Regexp{regexp.MustCompile(`"status":"(DOWN|error)"`)}}, terminusBody,
			`body matches /"status":"(DOWN|error)"/, which it must not`},
		{"positive and negative together", Expectations{
			BodyRegex:    []*regexp.Regexp{regexp.MustCompile(`UP`)},
			BodyNotRegex: []*regexp.Regexp{regexp.MustCompile(`OUT_OF_SERVICE`)}}, actuatorDisk, "body matches /OUT_OF_SERVICE/"},
		{"positive fails first", Expectations{
			BodyRegex:    []*regexp.Regexp{regexp.MustCompile(`nothere`)},
			BodyNotRegex: []*regexp.Regexp{regexp.MustCompile(`UP`)}}, actuatorUp, "body does not match /nothere/"},
		{"header matched", Expectations{HeaderNotRE: []HeaderExpect{{Name: "X-Status", RE: regexp.MustCompile(`^degraded`)}}}, "",
			"header X-Status matches /^degraded/, which it must not (X-Status: degraded: disk)"},
		{"header missing passes", Expectations{HeaderNotRE: []HeaderExpect{{Name: "X-Other", RE: regexp.MustCompile(`.`)}}}, "", ""},
		{"header not matched", Expectations{HeaderNotRE: []HeaderExpect{{Name: "X-Status", RE: regexp.MustCompile(`down`)}}}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.e.Check(h, scanOf(&c.e, c.body), 1<<16)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestDegraded: a degraded condition that holds says so; one that does
// not (or a path that is missing, or a body that is not JSON) marks
// nothing; the conditions that must hold are judged apart.
func TestDegraded(t *testing.T) {
	deg := func(s string) JSONExpect {
		j, err := ParseJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	for _, c := range []struct {
		name string
		e    Expectations
		body string
		want string
	}{
		{"not every component is not UP", Expectations{DegradedJSON: []JSONExpect{deg("components.@values.#.status!=UP")}}, actuatorDisk, ""},
		{"any component not UP", Expectations{DegradedJSON: []JSONExpect{deg(`components.@values.#(status!="UP").status!=UP`)}}, actuatorDisk,
			`holds (components.@values.#(status!="UP").status is "OUT_OF_SERVICE")`},
		{"no component not UP", Expectations{DegradedJSON: []JSONExpect{deg(`components.@values.#(status!="UP").status!=UP`)}}, actuatorUp, ""},
		{"some component not UP", Expectations{DegradedJSON: []JSONExpect{deg("components.diskSpace.status!=UP")}}, actuatorDisk,
			`JSON components.diskSpace.status!=UP holds (components.diskSpace.status is "OUT_OF_SERVICE")`},
		{"all UP", Expectations{DegradedJSON: []JSONExpect{deg("components.diskSpace.status!=UP")}}, actuatorUp, ""},
		{"status Degraded", Expectations{DegradedJSON: []JSONExpect{deg("status=Degraded")}}, `{"status":"Degraded"}`, `JSON status=Degraded holds (status is "Degraded")`},
		{"a number", Expectations{DegradedJSON: []JSONExpect{deg("components.diskSpace.details.free<100")}}, actuatorDisk, "free is 40)"},
		{"missing path marks nothing", Expectations{DegradedJSON: []JSONExpect{deg("nothere=1")}}, actuatorDisk, ""},
		{"not JSON marks nothing", Expectations{DegradedJSON: []JSONExpect{deg("status=Degraded")}}, `Degraded`, ""},
		{"body regex", Expectations{DegradedBody: []*regexp.Regexp{regexp.MustCompile(`(?i)degraded`)}}, `Healthy: no; Degraded`, "body matches /(?i)degraded/"},
		{"body regex not matched", Expectations{DegradedBody: []*regexp.Regexp{regexp.MustCompile(`Degraded`)}}, `Healthy`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := scanOf(&c.e, c.body)
			if msg := c.e.Check(nil, b, 1<<16); msg != "" {
				t.Fatalf("a degraded condition failed the answer: %s", msg)
			}
			got := c.e.Degraded(b, 1<<16)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("Degraded = %q, want %q", got, c.want)
			}
		})
	}
}
