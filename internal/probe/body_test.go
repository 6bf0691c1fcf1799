package probe

import (
	"context"
	"io"
	"math"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
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
		{name: "text across chunks", body: big + "READY" + big, max: math.MaxInt64, text: []string{"READY", "filler"}},
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
			e := &Expectations{BodyText: c.text}
			for _, r := range c.re {
				e.BodyRegex = append(e.BodyRegex, regexp.MustCompile(r))
			}
			if c.json {
				e.JSON = []JSONExpect{{Path: "status", Value: "ready"}}
			}
			res, err := e.scanBody(&chunked{s: c.body, n: 4093}, c.max)
			if err != nil {
				t.Fatal(err)
			}
			if res.truncated != c.truncated {
				t.Errorf("truncated %v, want %v", res.truncated, c.truncated)
			}
			if res.missingText != c.missing {
				t.Errorf("missing %q, want %q", res.missingText, c.missing)
			}
			got := ""
			if res.failedRegex != nil {
				got = res.failedRegex.String()
			}
			if got != c.failedRE {
				t.Errorf("failed regex %q, want %q", got, c.failedRE)
			}
			if c.json && string(res.json) != c.body {
				t.Errorf("json kept %q", res.json)
			}
			if !c.json && res.json != nil {
				t.Errorf("kept %d bytes without --expect-json", len(res.json))
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
	e := &Expectations{BodyText: []string{"THE-END"}, BodyRegex: []*regexp.Regexp{regexp.MustCompile(`THE-E.D`)}}
	r := io.MultiReader(io.LimitReader(zeros{}, size), strings.NewReader("THE-END"))
	var before, after runtimeMem
	before.read()
	res, err := e.scanBody(r, math.MaxInt64)
	after.read()
	if err != nil || res.hasMissingText || res.failedRegex != nil {
		t.Fatalf("err %v missing %q regex %v", err, res.missingText, res.failedRegex)
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
	e := &Expectations{JSON: []JSONExpect{{Path: "status", Value: "ready"}}}
	body := `{"pad":"` + strings.Repeat("x", MaxJSONBody) + `","status":"ready"}`
	res, err := e.scanBody(strings.NewReader(body), math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	msg := e.check(nil, res, math.MaxInt64)
	if !res.jsonOver || !strings.Contains(msg, "8MiB kept for --expect-json") {
		t.Errorf("over %v, message %q", res.jsonOver, msg)
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

func TestRedactorRawURLAndConcurrency(t *testing.T) {
	r := NewRedactor(nil, []string{"session"})
	for raw, want := range map[string]string{
		"http://[::1/bad?token=SECRET&page=2":    "http://[::1/bad?token=***&page=2",
		"http://user:pw@[::1/x?session=S1#frag":  "http://***@[::1/x?session=***#frag",
		"https://h:99999999/p?Token=ABC&sig=DEF": "https://h:99999999/p?Token=***&sig=***",
		"no url at all":                          "no url at all",
		"/relative?access_token=XYZ&ok=1":        "/relative?access_token=***&ok=1",
	} {
		if got := r.RawURL(raw); got != want {
			t.Errorf("RawURL(%q) = %q, want %q", raw, got, want)
		}
	}
	// AddURL and String from many goroutines (run with -race).
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, _ := url.Parse("http://u:SECRETPW" + strings.Repeat("x", i) + "@h/?token=T" + strings.Repeat("y", i+3))
			r.AddURL(u)
			_ = r.String("SECRETPW and more")
		}()
	}
	wg.Wait()
	if got := r.String("SECRETPWxxx"); strings.Contains(got, "SECRET") {
		t.Errorf("not scrubbed: %q", got)
	}
}

func TestDaysLeft(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, c := range []struct {
		after time.Duration
		want  int
	}{
		{29*day + 12*time.Hour, 29},
		{day, 1},
		{23 * time.Hour, 0},
		{-time.Hour, -1},
		{-day - time.Minute, -1}, // expired a day ago
		{-2*day - time.Minute, -2},
	} {
		if got := DaysLeft(now.Add(c.after), now); got != c.want {
			t.Errorf("DaysLeft(now%+v) = %d, want %d", c.after, got, c.want)
		}
	}
}

func TestRetryAfterWholeSeconds(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 400e6, time.UTC)
	d := retryAfter("Sun, 29 Nov 2026 12:00:05 GMT", now)
	if d == nil || *d != 5*time.Second {
		t.Errorf("HTTP-date Retry-After gave %v, want 5s", d)
	}
	if d := retryAfter("7", now); d == nil || *d != 7*time.Second {
		t.Errorf("delta Retry-After gave %v", d)
	}
}

// TestRetryAfterClamped: huge values are clamped to MaxRetryAfter, never
// wrapped around into a negative delay.
func TestRetryAfterClamped(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"9999999999", "9223372036854775807", "99999999999999999999999", "31536000"} {
		if d := retryAfter(v, now); d == nil || *d != MaxRetryAfter {
			t.Errorf("Retry-After %s gave %v, want %v", v, d, MaxRetryAfter)
		}
	}
	if d := retryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now); d == nil || *d != MaxRetryAfter {
		t.Errorf("far HTTP date gave %v", d)
	}
	for _, v := range []string{"-1", "1.5", "x"} {
		if d := retryAfter(v, now); d != nil {
			t.Errorf("Retry-After %q gave %v, want none", v, *d)
		}
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
	e := &Expectations{BodyText: []string{"THE-END"}}
	b.SetBytes(size)
	for b.Loop() {
		r := io.MultiReader(io.LimitReader(zeros{}, size), strings.NewReader("THE-END"))
		if res, err := e.scanBody(r, math.MaxInt64); err != nil || res.hasMissingText {
			b.Fatal(err, res.missingText)
		}
	}
}

// BenchmarkScanBodyRegex is the same through one --expect-body-regex.
func BenchmarkScanBodyRegex(b *testing.B) {
	const size = 4 << 20
	e := &Expectations{BodyRegex: []*regexp.Regexp{regexp.MustCompile(`THE-E.D$`)}}
	b.SetBytes(size)
	for b.Loop() {
		r := io.MultiReader(io.LimitReader(zeros{}, size), strings.NewReader("THE-END"))
		if res, err := e.scanBody(r, math.MaxInt64); err != nil || res.failedRegex != nil {
			b.Fatal(err)
		}
	}
}
