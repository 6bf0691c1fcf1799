package httpprobe

import (
	"context"
	"io"
	"math"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/fixture"
)

// chunked returns a reader giving s in pieces of n bytes, so texts and
// matches cross read boundaries.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(b []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := min(c.n, len(b), len(c.s))
	copy(b, c.s[:k])
	c.s = c.s[k:]
	return k, nil
}

func TestScanBody(t *testing.T) {
	big := strings.Repeat("filler ", 200000) // 1.4 MB
	cases := []struct {
		name      string
		body      string
		max       int64
		text      []string
		re        []string
		json      bool
		truncated bool
		missing   string
		failedRE  string
	}{
		{name: "text deep in the body", body: big + "READY" + big, max: math.MaxInt64, text: []string{"READY", "filler"}},
		// The reads are 4,093 bytes: READY's first two bytes end the first
		// read and the rest begins the second.
		{name: "text across a read", body: strings.Repeat("x", 4093-2) + "READY" + big, max: math.MaxInt64, text: []string{"READY"}},
		// A text longer than a read: its start in the first, its end in
		// the third.
		{name: "text across three reads", body: strings.Repeat("x", 4000) + strings.Repeat("0123456789", 500) + big, max: math.MaxInt64,
			text: []string{strings.Repeat("0123456789", 500)}},
		{name: "text missing", body: big, max: math.MaxInt64, text: []string{"READY"}, missing: "READY"},
		// With a max of MaxInt64 nothing may wrap: the text is found.
		{name: "max int64", body: "ok ready\n", max: math.MaxInt64, text: []string{"ready"}},
		{name: "max int64 minus one", body: "ok ready\n", max: math.MaxInt64 - 1, text: []string{"ready"}},
		{name: "regex at the very end", body: big + "status=up", max: math.MaxInt64, re: []string{`status=up$`}},
		{name: "regex anchored at the start", body: big + "x", max: math.MaxInt64, re: []string{`^filler`, `^x`}, failedRE: `^x`},
		{name: "cap truncates", body: big + "READY", max: 1024, text: []string{"READY"}, truncated: true, missing: "READY"},
		{name: "cap exact is not truncation", body: "12345", max: 5, truncated: false},
		{name: "json kept", body: `{"status":"ready"}`, max: math.MaxInt64, json: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &expect.Expectations{BodyText: c.text}
			for _, r := range c.re {
				e.BodyRegex = append(e.BodyRegex, regexp.MustCompile(r))
			}
			if c.json {
				e.JSON = []expect.JSONExpect{{Path: "status", Value: "ready"}}
			}
			res, err := readBody(&chunked{s: c.body, n: 4093}, c.max, e)
			if err != nil {
				t.Fatal(err)
			}
			if res.Truncated != c.truncated {
				t.Errorf("truncated %v, want %v", res.Truncated, c.truncated)
			}
			if res.MissingText != c.missing {
				t.Errorf("missing %q, want %q", res.MissingText, c.missing)
			}
			got := ""
			if res.FailedRegex != nil {
				got = res.FailedRegex.String()
			}
			if got != c.failedRE {
				t.Errorf("failed regex %q, want %q", got, c.failedRE)
			}
			if c.json && string(res.JSON) != c.body {
				t.Errorf("json kept %q", res.JSON)
			}
			if !c.json && res.JSON != nil {
				t.Errorf("kept %d bytes without --expect-json", len(res.JSON))
			}
		})
	}
}

// TestScanBodyHoldsNoBody: streaming a body through the text and regex
// conditions allocates a small fraction of it (the read buffer and the
// matchers' buffers), however long the body. (The regex matcher is Go's NFA:
// slow on long bodies, so this body is short.)
func TestScanBodyHoldsNoBody(t *testing.T) {
	const size = 4 << 20
	e := &expect.Expectations{BodyText: []string{"THE-END"}, BodyRegex: []*regexp.Regexp{regexp.MustCompile(`THE-E.D`)}}
	r := io.MultiReader(io.LimitReader(zeros{}, size), strings.NewReader("THE-END"))
	var before, after runtimeMem
	before.read()
	res, err := readBody(r, math.MaxInt64, e)
	after.read()
	if err != nil || res.HasMissingText || res.FailedRegex != nil {
		t.Fatalf("err %v missing %q regex %v", err, res.MissingText, res.FailedRegex)
	}
	if grew := after.total - before.total; grew > 1<<20 {
		t.Errorf("allocated %d bytes for a %d-byte body", grew, size)
	}
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

func TestJSONOverTheCap(t *testing.T) {
	e := &expect.Expectations{JSON: []expect.JSONExpect{{Path: "status", Value: "ready"}}}
	body := `{"pad":"` + strings.Repeat("x", expect.MaxJSONBody) + `","status":"ready"}`
	res, err := readBody(strings.NewReader(body), math.MaxInt64, e)
	if err != nil {
		t.Fatal(err)
	}
	msg := e.Check(nil, res, math.MaxInt64)
	if !res.JSONOver || !strings.Contains(msg, "8MiB kept for --expect-json") {
		t.Errorf("over %v, message %q", res.JSONOver, msg)
	}
}

func TestTruncatedConditionSaysSo(t *testing.T) {
	s, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{BodySize: 200 << 10, Body: "READY"})
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, s.URL, "")
	o.Expect.BodyText = []string{"READY"}
	r := Run(context.Background(), o)
	if r.Reason != classify.ConditionFailed || !strings.Contains(r.Error, "truncated") || !strings.Contains(r.Error, "64KiB") {
		t.Errorf("got %s %q, want condition_failed saying the body was truncated at 64KiB", r.Reason, r.Error)
	}
	o.MaxBody = math.MaxInt64
	if r = Run(context.Background(), o); r.Reason != classify.OK {
		t.Errorf("with max-body MaxInt64: %s %q", r.Reason, r.Error)
	}
}

// runtimeMem reads the total bytes allocated so far.
type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total = s.TotalAlloc
}

// BenchmarkScanBody streams a 16 MiB body through one --expect-body text
// (b.SetBytes: the MB/s is the scan's throughput).
func BenchmarkScanBody(b *testing.B) {
	const size = 16 << 20
	e := &expect.Expectations{BodyText: []string{"THE-END"}}
	b.SetBytes(size)
	for b.Loop() {
		r := io.MultiReader(io.LimitReader(zeros{}, size), strings.NewReader("THE-END"))
		if res, err := readBody(r, math.MaxInt64, e); err != nil || res.HasMissingText {
			b.Fatal(err, res.MissingText)
		}
	}
}

// BenchmarkScanBodyRegex is the same through one --expect-body-regex.
func BenchmarkScanBodyRegex(b *testing.B) {
	const size = 4 << 20
	e := &expect.Expectations{BodyRegex: []*regexp.Regexp{regexp.MustCompile(`THE-E.D$`)}}
	b.SetBytes(size)
	for b.Loop() {
		r := io.MultiReader(io.LimitReader(zeros{}, size), strings.NewReader("THE-END"))
		if res, err := readBody(r, math.MaxInt64, e); err != nil || res.FailedRegex != nil {
			b.Fatal(err)
		}
	}
}
