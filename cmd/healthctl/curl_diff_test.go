// The curl differential test: every probe fixture case of the suite, and a
// matrix of real servers (curl_stacks_test.go), probed by `healthctl probe
// -o json` and by curl side by side. Their outcome classes must agree under
// the one mapping in curlAgrees (documented in docs/outcomes.md, "healthctl
// and curl"); every case where they differ must be listed in that page's
// disagreement table with why healthctl's answer is the right one. An
// undocumented disagreement fails the test, and so does a listed one that
// no longer happens (the table must stay true).
//
// Run it alone: go test ./cmd/healthctl -run TestCurlDiff -v
//
// curl here has no c-ares (no --dns-servers): it asks the DNS fixture
// through a DNS-over-HTTPS front (dnsfix.DoHFront, --doh-url), which passes
// each query on over UDP (TCP after a truncated reply) and hands back the
// server's bytes.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
	"github.com/healthctl/healthctl/internal/fixture/h2fixture"
	"github.com/healthctl/healthctl/internal/fixture/hostile"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/fixture/proxyfix"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
	"github.com/healthctl/healthctl/internal/fixture/tlsfix"
	"github.com/healthctl/healthctl/internal/scheme"
)

// diffCase is one probe run by both.
type diffCase struct {
	// name is the case's id in docs/outcomes.md's disagreement table.
	name string
	url  string
	// dns asks this DNS server (healthctl --dns-server; curl through a DoH
	// front for it) instead of none: the case's name needs a lookup.
	dns string
	// proxy, when set, is HTTP_PROXY and HTTPS_PROXY for both.
	proxy string
	// cacert is --cacert for both.
	cacert string
	// cert, key are --cert/--key for both.
	cert, key string
	// data is -d for both (a request with a body, POST); dataFile is a
	// file sent as the body (--data @FILE, curl --data-binary @FILE).
	data, dataFile string
	// h2c speaks HTTP/2 with prior knowledge (both).
	h2c bool
	// hc and curl are extra arguments for one side only.
	hc, curl []string
	// hcSays, when set, must be in healthctl's error: what it tells the
	// user to do, checked against the real server.
	hcSays string
	// expectBody and expectRegex are body conditions (healthctl's
	// --expect-body, --expect-body-regex). curl's side of them is the
	// body curl got (--compressed: decoded), cut at --max-body, judged by
	// the standard library (bodyHolds).
	expectBody, expectRegex []string
	// expectHeader (NAME=RE) and expectJSON (PATH=VALUE) are healthctl's
	// --expect-header and --expect-json. curl's side of them is the last
	// header block of curl's -D dump, read by net/textproto
	// (headersHold), and the body curl got, read by encoding/json
	// (jsonHolds).
	expectHeader, expectJSON []string
}

// conditions says whether the case has conditions that curl's answer is
// judged by (its body and headers are kept).
func (c diffCase) conditions() bool {
	return len(c.expectBody)+len(c.expectRegex)+len(c.expectHeader)+len(c.expectJSON) > 0
}

// diffResult is what each side said.
type diffResult struct {
	curlExit   int
	curlStatus int
	curlErr    string
	curlTime   time.Duration
	// curlHolds says whether the case's conditions hold over the body
	// and headers curl got (nil: the case has none, or curl got no
	// answer).
	curlHolds *bool
	// curlRetry is the Retry-After of curl's answer as the standard
	// library reads it (retryAfterOf; nil: none, or not a delay). For an
	// HTTP date, curlRetryAt is the moment it names on this machine's
	// clock (when curl ended, plus the delay from the answer's Date).
	curlRetry   *time.Duration
	curlRetryAt time.Time

	outcome, reason string
	hcStatus        int
	hcExit          int
	hcErr           string
	hcTime          time.Duration
	// hcRetry is healthctl's retry_after_s; hcRan is when healthctl
	// ran (an HTTP date's delay depends on when it was read).
	hcRetry *float64
	hcRan   [2]time.Time
}

// The probe's windows in every case: the same limits for curl
// (--connect-timeout, -m).
const (
	diffConnect = 2 * time.Second
	diffMaxTime = 4 * time.Second
)

func TestCurlDiff(t *testing.T) {
	besideScripts(t)
	if testing.Short() {
		t.Skip("-short: the curl differential test runs real servers for about a minute")
	}
	// curl is the oracle here, a peer run beside us: a real-stack test.
	stackfix.RequireStacks(t)
	stackfix.Require(t, stacksDir, "curl")
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal(err)
	}
	hc, err := exec.LookPath("healthctl")
	if err != nil {
		t.Fatalf("healthctl (this test binary, installed by testscript.Main) not on PATH: %v", err)
	}
	allowed, err := readDisagreements(filepath.Join("..", "..", "docs", "outcomes.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pki, err := pkifix.NewPKI(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	dns, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	cases := fixtureCases(t, pki, dns.Addr)
	cases = append(cases, stackCases(t, dir, pki)...)
	filtered := false
	if re := os.Getenv("CURLDIFF_RUN"); re != "" {
		// CURLDIFF_RUN=REGEXP runs only the cases whose names match.
		keep := regexp.MustCompile(re)
		var some []diffCase
		for _, c := range cases {
			if keep.MatchString(c.name) {
				some = append(some, c)
			}
		}
		cases = some
		filtered = true
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("case %q twice", c.name)
		}
		seen[c.name] = true
	}

	dohs := map[string]string{} // DNS server -> its DoH front
	for _, c := range cases {
		if c.dns != "" && dohs[c.dns] == "" {
			front, err := dnsfix.NewDoHFront(t, pki, c.dns)
			if err != nil {
				t.Fatal(err)
			}
			dohs[c.dns] = front.URL
		}
	}

	results := make([]diffResult, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4) // two cores: a few cases at a time
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runDiffCase(t, curl, hc, dir, c, dohs[c.dns])
		}()
	}
	wg.Wait()
	// A real stack on a loaded machine fails a request now and then (curl
	// once got caddy's HTTP/2 stream error on a POST while the race suite
	// ran): an undocumented disagreement is run again, alone, twice at
	// most, and only one that persists fails the test. The first run's
	// answers stay in the report.
	retried := map[int]string{}
	for i, c := range cases {
		if _, listed := allowed[c.name]; listed || curlAgrees(results[i]) {
			continue
		}
		first := results[i]
		for attempt := 0; attempt < 2 && !curlAgrees(results[i]); attempt++ {
			results[i] = runDiffCase(t, curl, hc, dir, c, dohs[c.dns])
		}
		retried[i] = fmt.Sprintf(" (run again: the first run said curl %s, healthctl %s)", first.curlText(), first.hcText())
	}

	var report strings.Builder
	fmt.Fprintf(&report, "%-28s %-22s %-44s %s\n", "case", "curl", "healthctl", "verdict")
	// Each group of cases (the part of its name before "/": a real
	// server, or the fixtures' httpd, tls, …) reports in a subtest of its
	// own, with its stack's start-up trouble: a daemon that is lost fails
	// its own cases only.
	groups := map[string]*groupTB{}
	var order []string
	groupOf := func(name string) *groupTB {
		prefix, _, _ := strings.Cut(name, "/")
		if g, ok := groups[prefix]; ok {
			return g
		}
		g := &groupTB{T: t}
		if v, ok := stackGroups.Load(prefix); ok {
			g = v.(*groupTB)
		}
		groups[prefix] = g
		order = append(order, prefix)
		return g
	}
	stackGroups.Range(func(k, _ any) bool { groupOf(k.(string) + "/"); return true })
	for i, c := range cases {
		t := groupOf(c.name)
		r := results[i]
		agree := curlAgrees(r)
		why, listed := allowed[c.name]
		verdict := "agree"
		switch {
		case agree && listed:
			verdict = "STALE: listed as a disagreement, but they agree"
			t.Errorf("case %s: listed in docs/outcomes.md as a disagreement (%s), but curl (%s) and healthctl (%s) agree: remove the row",
				c.name, why, r.curlText(), r.hcText())
		case !agree && listed:
			verdict = "disagree (documented)"
		case !agree:
			verdict = "DISAGREE (not documented)"
			t.Errorf("case %s: curl says %s, healthctl says %s; not listed in docs/outcomes.md's disagreement table\n  curl: %s\n  healthctl: %s",
				c.name, r.curlText(), r.hcText(), r.curlErr, r.hcErr)
		}
		if c.hcSays != "" && !strings.Contains(r.hcErr, c.hcSays) {
			t.Errorf("case %s: healthctl's error %q does not say %q", c.name, r.hcErr, c.hcSays)
		}
		fmt.Fprintf(&report, "%-28s %-22s %-44s %s%s\n", c.name,
			r.curlText()+" "+r.curlTime.Round(10*time.Millisecond).String(),
			r.hcText()+" "+r.hcTime.Round(10*time.Millisecond).String(), verdict, retried[i])
	}
	slices.Sort(order)
	for _, name := range order {
		g := groups[name]
		t.Run(name, func(t *testing.T) {
			errs, skip := g.result()
			for _, e := range errs {
				t.Error(e)
			}
			if len(errs) == 0 && skip != "" {
				t.Skip(skip)
			}
		})
	}
	sweepAgrees(t, hc, dir, cases, results, allowed)
	for name := range allowed {
		if !seen[name] && !skippedCase(name) && !filtered {
			t.Errorf("docs/outcomes.md lists a disagreement for case %s, which the test does not run", name)
		}
	}
	t.Logf("curl vs healthctl:\n%s", report.String())
}

// stackGroups are the recorders the real stacks started under (by
// group name); see groupTB.
var stackGroups sync.Map

// groupTB is the test as one group of TestCurlDiff's cases sees it: its
// errors (a stack not installed in CI, a daemon that did not come up, a
// case's disagreement) and its skip line (a stack not installed outside
// CI) are kept for the group's subtest instead of failing the whole test.
// Fatal and the rest are the test's own.
type groupTB struct {
	*testing.T
	mu   sync.Mutex
	errs []string
	skip string
}

func (g *groupTB) Errorf(format string, args ...any) { g.add(fmt.Sprintf(format, args...)) }
func (g *groupTB) Error(args ...any)                 { g.add(strings.TrimSuffix(fmt.Sprintln(args...), "\n")) }

func (g *groupTB) add(e string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.errs = append(g.errs, e)
}

// Logf keeps stackfix.Missing's skip line as the group's, and logs.
func (g *groupTB) Logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if strings.HasPrefix(line, "skipped outside CI") {
		g.mu.Lock()
		g.skip = line
		g.mu.Unlock()
	}
	g.T.Log(line)
}

// Failed reports whether the group has an error (a deferred log of a
// daemon's output asks it).
func (g *groupTB) Failed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.errs) > 0 || g.T.Failed()
}

func (g *groupTB) result() ([]string, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.errs...), g.skip
}

// skippedStacks are the real-server groups that could not run here (not
// installed outside CI); their documented rows are not stale.
var skippedStacks sync.Map

func skippedCase(name string) bool {
	prefix, _, _ := strings.Cut(name, "/")
	_, ok := skippedStacks.Load(prefix)
	return ok
}

func (r diffResult) curlText() string {
	if r.curlExit != 0 {
		return strconv.Itoa(r.curlExit)
	}
	s := fmt.Sprintf("0 (%d", r.curlStatus)
	if r.curlHolds != nil {
		s += fmt.Sprintf(", conditions hold: %v", *r.curlHolds)
	}
	if r.curlRetry != nil {
		s += fmt.Sprintf(", retry-after %gs", r.curlRetry.Seconds())
	}
	return s + ")"
}

func (r diffResult) hcText() string {
	s := r.outcome + " " + r.reason
	if r.hcStatus != 0 {
		s += fmt.Sprintf(" (%d", r.hcStatus)
		if r.hcRetry != nil {
			s += fmt.Sprintf(", retry-after %gs", *r.hcRetry)
		}
		s += ")"
	}
	return s
}

// retryMargin is how far healthctl's delay from an HTTP-date Retry-After
// may be from curl's side of it: whole seconds on both sides, the
// answer's Date against this machine's clock, a loaded machine.
const retryMargin = 10 * time.Second

// retryAgrees says whether healthctl's retry_after_s is curl's answer's
// Retry-After: both absent, the same seconds, or an HTTP date's delay
// counted from some moment while healthctl ran (within retryMargin): the
// sweep reads it a minute after curl did.
func retryAgrees(r diffResult) bool {
	if r.curlRetry == nil || r.hcRetry == nil {
		return r.curlRetry == nil && r.hcRetry == nil
	}
	got := time.Duration(*r.hcRetry * float64(time.Second))
	if r.curlRetryAt.IsZero() {
		return (got - *r.curlRetry).Abs() < time.Millisecond
	}
	lo := max(r.curlRetryAt.Sub(r.hcRan[1]), 0) - retryMargin
	hi := max(r.curlRetryAt.Sub(r.hcRan[0]), 0) + retryMargin
	return got >= lo && got <= hi
}

// curlAgrees is the one mapping from curl's answer to healthctl's outcome
// class (docs/outcomes.md, "healthctl and curl"). curl's exit code names
// the step that failed; healthctl's outcome the same step, more finely.
// Where curl cannot tell the target's fault from the prober's (a resolver
// that refuses, a proxy that fails), both of healthctl's readings agree.
func curlAgrees(r diffResult) bool {
	o, reason := r.outcome, r.reason
	unknownIn := func(reasons ...string) bool {
		if o != "unknown" {
			return false
		}
		for _, x := range reasons {
			if reason == x {
				return true
			}
		}
		return false
	}
	switch r.curlExit {
	case 0: // an answer: the same status (and Retry-After), pass exactly when it is 2xx
		if r.hcStatus != r.curlStatus || !retryAgrees(r) {
			return false
		}
		if r.curlStatus >= 200 && r.curlStatus < 300 {
			if r.curlHolds != nil && !*r.curlHolds {
				// What curl got does not meet the conditions.
				return o == "unreachable" && reason == "condition_failed"
			}
			return o == "pass"
		}
		return o == "unreachable" || unknownIn("proxy_auth_required", "proxy_refused")
	case 6: // could not resolve the host
		return o == "dns" || unknownIn("resolver_refused", "resolver_error", "resolver_unreachable")
	case 5: // could not resolve the proxy
		return unknownIn("proxy_unreachable")
	case 7: // could not connect (to the server or the proxy)
		return o == "refused" || (o == "unreachable" && (reason == "host_unreachable" || reason == "net_unreachable")) ||
			unknownIn("proxy_unreachable", "local_error")
	case 28: // a timeout
		return o == "timeout" || unknownIn("proxy_timeout")
	case 35, 58, 59, 60, 77, 80, 83, 90, 91: // TLS: handshake, local or peer certificate
		return o == "tls"
	case 1, 8, 16, 18, 52, 55, 56, 92, 95: // the answer was not (a whole) HTTP answer
		return o == "unreachable" || unknownIn("proxy_refused", "proxy_auth_required")
	case 97: // the proxy handshake failed
		return unknownIn("proxy_unreachable", "proxy_refused", "proxy_auth_required", "proxy_timeout") ||
			(o == "unreachable" && reason == "proxy_error")
	}
	return false
}

// runDiffCase runs curl and healthctl for one case, one after the other
// (a server that holds connections cannot tell them apart anyway).
func runDiffCase(t *testing.T, curl, hc, dir string, c diffCase, doh string) diffResult {
	var r diffResult
	env := diffEnv(dir, c.proxy)

	// curl: -q first (no .curlrc), its error on stderr, the status on
	// stdout, the headers it got in a file (-D).
	conditions := c.conditions()
	body := os.DevNull
	if conditions {
		body = filepath.Join(dir, "body-"+strings.ReplaceAll(c.name, "/", "_"))
	}
	head := filepath.Join(dir, "head-"+strings.ReplaceAll(c.name, "/", "_"))
	args := []string{"-q", "-sS", "-o", body, "-D", head, "-w", "%{http_code}",
		"--connect-timeout", secs(diffConnect), "-m", secs(diffMaxTime)}
	if conditions {
		args = append(args, "--compressed")
	}
	if doh != "" {
		args = append(args, "--doh-url", doh, "--doh-insecure")
	}
	if c.cacert != "" {
		args = append(args, "--cacert", c.cacert)
	}
	if c.cert != "" {
		args = append(args, "--cert", c.cert, "--key", c.key)
	}
	if c.data != "" {
		args = append(args, "-d", c.data)
	}
	if c.dataFile != "" {
		args = append(args, "--data-binary", "@"+c.dataFile)
	}
	if c.h2c {
		args = append(args, "--http2-prior-knowledge")
	}
	args = append(append(args, c.curl...), c.url)
	start := time.Now()
	out, errOut, code := runBounded(curl, args, env)
	r.curlTime = time.Since(start)
	r.curlExit = code
	r.curlStatus, _ = strconv.Atoi(strings.TrimSpace(out))
	r.curlErr = strings.TrimSpace(errOut)
	if code == 0 {
		h, err := lastHeaders(head)
		if err != nil {
			t.Fatalf("case %s: curl's -D dump: %v", c.name, err)
		}
		var date bool
		ended := start.Add(r.curlTime)
		r.curlRetry, date = retryAfterOf(h, ended)
		if date {
			r.curlRetryAt = ended.Add(*r.curlRetry)
		}
		if conditions {
			got, err := os.ReadFile(body)
			if err != nil {
				t.Fatalf("case %s: curl's body: %v", c.name, err)
			}
			holds := bodyHolds(t, got, c) && headersHold(t, h, c) && jsonHolds(t, got, c)
			r.curlHolds = &holds
		}
	}

	args = []string{"probe", "-o", "json", "--connect-timeout", diffConnect.String(),
		"--read-timeout", "2s", "--max-time", diffMaxTime.String()}
	if c.dns != "" {
		args = append(args, "--dns-server", c.dns)
	}
	if c.cacert != "" {
		args = append(args, "--cacert", c.cacert)
	}
	if c.cert != "" {
		args = append(args, "--cert", c.cert, "--key", c.key)
	}
	if c.data != "" {
		args = append(args, "--data", c.data)
	}
	if c.dataFile != "" {
		args = append(args, "--data", "@"+c.dataFile)
	}
	if c.h2c {
		args = append(args, "--http2-prior-knowledge")
	}
	for _, text := range c.expectBody {
		args = append(args, "--expect-body", text)
	}
	for _, re := range c.expectRegex {
		args = append(args, "--expect-body-regex", re)
	}
	for _, h := range c.expectHeader {
		args = append(args, "--expect-header", h)
	}
	for _, j := range c.expectJSON {
		args = append(args, "--expect-json", j)
	}
	args = append(append(args, c.hc...), c.url)
	start = time.Now()
	out, errOut, code = runBounded(hc, args, env)
	r.hcTime = time.Since(start)
	r.hcRan = [2]time.Time{start, start.Add(r.hcTime)}
	r.hcExit = code
	var j hcJSON
	if err := json.Unmarshal([]byte(firstLine(out)), &j); err != nil {
		r.outcome, r.reason = "(no JSON)", fmt.Sprintf("exit %d", code)
		r.hcErr = strings.TrimSpace(errOut)
		return r
	}
	j.into(&r)
	return r
}

// hcJSON is what the test reads of healthctl's JSON for a probe result.
type hcJSON struct {
	Target      string   `json:"target"`
	Outcome     string   `json:"outcome"`
	Reason      string   `json:"reason"`
	HTTPStatus  int      `json:"http_status"`
	Error       string   `json:"error"`
	RetryAfterS *float64 `json:"retry_after_s"`
}

// into sets healthctl's side of r.
func (j hcJSON) into(r *diffResult) {
	r.outcome, r.reason, r.hcStatus, r.hcErr, r.hcRetry = j.Outcome, j.Reason, j.HTTPStatus, j.Error, j.RetryAfterS
}

// lastHeaders reads curl's -D dump: a block per answer it got (a proxy's
// CONNECT answer, a 1xx, the final answer), each a status line and
// header lines. It returns the last block's headers, as net/textproto
// reads them (names canonical, values trimmed, repeated lines kept).
func lastHeaders(file string) (textproto.MIMEHeader, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tp := textproto.NewReader(bufio.NewReader(f))
	var last textproto.MIMEHeader
	for {
		line, err := tp.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "HTTP/") {
			return nil, fmt.Errorf("%q is not a status line", line)
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil && err != io.EOF {
			return nil, err
		}
		last = h
		if err == io.EOF {
			break
		}
	}
	if last == nil {
		return nil, fmt.Errorf("no answer in %s", file)
	}
	return last, nil
}

// retryAfterOf reads a Retry-After as RFC 9110 §10.2.3 defines it, with
// the standard library: delay-seconds (digits only, strconv) or an
// HTTP-date (http.ParseTime) counted from the answer's Date (or from
// when curl ended, without one), never below 0; nil for anything else.
// date says it was an HTTP-date.
func retryAfterOf(h textproto.MIMEHeader, ended time.Time) (d *time.Duration, date bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return nil, false
	}
	if strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return nil, false // far past any case of this test
		}
		s := time.Duration(n) * time.Second
		return &s, false
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return nil, false
	}
	from := ended
	if served, err := http.ParseTime(h.Get("Date")); err == nil {
		from = served
	}
	s := max(at.Sub(from), 0)
	return &s, true
}

// headersHold judges a case's --expect-header NAME=RE conditions over the
// headers curl got: NAME is before the first "=", and the condition
// holds when any value sent under NAME (in any case: textproto's
// canonical key) matches RE.
func headersHold(t *testing.T, h textproto.MIMEHeader, c diffCase) bool {
	for _, cond := range c.expectHeader {
		name, expr, ok := strings.Cut(cond, "=")
		if !ok {
			t.Fatalf("case %s: %q is not NAME=RE", c.name, cond)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			t.Fatalf("case %s: %v", c.name, err)
		}
		held := false
		for _, v := range h.Values(name) {
			held = held || re.MatchString(v)
		}
		if !held {
			return false
		}
	}
	return true
}

// jsonPathLiteral is the whole of the oracle's path syntax: object keys
// and array indexes, joined by dots. gjson's queries, wildcards,
// modifiers and escapes are not judged here: a case that used them
// would be judged by the code under test's own rules.
var jsonPathLiteral = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

// jsonHolds judges a case's --expect-json PATH=VALUE conditions over the
// body curl got (its first --max-body bytes), with encoding/json: the
// body must be one JSON value; PATH is before the first "=", each of its
// dotted parts a key of an object or (digits) an index of an array; the
// value found is compared with VALUE: a string as it decodes; true, false
// and null as the word; a number as a number (two integers digit by
// digit, so ids past float64's precision stay apart; else both parsed by
// strconv). A case whose path reaches an object or an array is not judged
// (the test fails).
func jsonHolds(t *testing.T, body []byte, c diffCase) bool {
	if len(c.expectJSON) == 0 {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(body[:min(len(body), scheme.DefaultMaxBody)]))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return false // not JSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return false // more than one value
	}
	for _, cond := range c.expectJSON {
		path, want, ok := strings.Cut(cond, "=")
		if !ok || !jsonPathLiteral.MatchString(path) {
			t.Fatalf("case %s: %q is not a literal PATH=VALUE", c.name, cond)
		}
		v := doc
		for part := range strings.SplitSeq(path, ".") {
			switch node := v.(type) {
			case map[string]any:
				v, ok = node[part]
			case []any:
				i, err := strconv.Atoi(part)
				ok = err == nil && i >= 0 && i < len(node)
				if ok {
					v = node[i]
				}
			default:
				ok = false
			}
			if !ok {
				return false // missing
			}
		}
		var holds bool
		switch x := v.(type) {
		case string:
			holds = x == want
		case json.Number:
			holds = sameNumber(x.String(), want)
		case bool:
			holds = strconv.FormatBool(x) == want
		case nil:
			holds = want == "null"
		default:
			t.Fatalf("case %s: %s is %T in the body curl got, which the oracle does not compare", c.name, path, v)
		}
		if !holds {
			return false
		}
	}
	return true
}

// sameNumber: a number written in the body (encoding/json's text of it)
// and VALUE name the same number.
func sameNumber(body, want string) bool {
	if _, err := strconv.ParseFloat(want, 64); err != nil || !json.Valid([]byte(want)) {
		return false // VALUE is not a JSON number
	}
	integer := func(s string) bool { return !strings.ContainsAny(s, ".eE") }
	if integer(body) && integer(want) {
		return strings.TrimPrefix(body, "-") == strings.TrimPrefix(want, "-") && (body == want || strings.TrimPrefix(body, "-") == "0")
	}
	b, _ := strconv.ParseFloat(body, 64)
	w, _ := strconv.ParseFloat(want, 64)
	return b == w
}

// bodyHolds judges a case's body conditions over the body curl got, as
// healthctl defines them: the first --max-body bytes (the default) contain
// every text and match every expression.
func bodyHolds(t *testing.T, body []byte, c diffCase) bool {
	body = body[:min(len(body), scheme.DefaultMaxBody)]
	for _, text := range c.expectBody {
		if !bytes.Contains(body, []byte(text)) {
			return false
		}
	}
	for _, re := range c.expectRegex {
		m, err := regexp.Compile(re)
		if err != nil {
			t.Fatalf("case %s: %v", c.name, err)
		}
		if !m.Match(body) {
			return false
		}
	}
	return true
}

// healthctlHas says whether healthctl probe has a flag (another branch may
// add it).
func healthctlHas(t *testing.T, flag string) bool {
	out, _ := exec.Command("healthctl", "probe", "--help").CombinedOutput()
	if !bytes.Contains(out, []byte(flag)) {
		t.Logf("healthctl probe has no %s: its cases are not run", flag)
		return false
	}
	return true
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// runBounded runs a program with a hard ceiling well past every window, so
// a hang in either program fails the case instead of the whole test run.
func runBounded(prog string, args, env []string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), diffMaxTime+20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			e.WriteString(" (killed after " + (diffMaxTime + 20*time.Second).String() + ")")
		}
	}
	return o.String(), e.String(), code
}

// diffEnv is the environment of both programs: this process's, without
// any proxy or HEALTHCTL_ variable, with HOME in the test's directory, and
// the case's proxy.
func diffEnv(dir, proxy string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "HEALTHCTL_"), strings.HasSuffix(strings.ToUpper(k), "_PROXY"),
			k == "HOME", k == "XDG_CONFIG_HOME", k == "CURL_HOME", k == "SSL_CERT_FILE", k == "SSL_CERT_DIR":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"))
	if proxy != "" {
		env = append(env, "HTTP_PROXY="+proxy, "HTTPS_PROXY="+proxy, "http_proxy="+proxy, "https_proxy="+proxy)
	}
	return env
}

// disagreementRow matches a row of the disagreement table: its first cell
// is the case name in backquotes.
var disagreementRow = regexp.MustCompile("^\\| `([a-z0-9_./-]+)` \\|(.*)\\|\\s*$")

// readDisagreements reads the table under "### Where curl and healthctl
// disagree" in docs/outcomes.md: case name -> the row's text.
func readDisagreements(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows := map[string]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.Contains(line, "Where curl and healthctl disagree")
			continue
		}
		if !in {
			continue
		}
		if m := disagreementRow.FindStringSubmatch(line); m != nil {
			if _, dup := rows[m[1]]; dup {
				return nil, fmt.Errorf("%s: case %s listed twice", file, m[1])
			}
			rows[m[1]] = strings.TrimSpace(m[2])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no table under \"Where curl and healthctl disagree\"", file)
	}
	return rows, nil
}

// fixtureCases are the probe fixture cases of the suite: every httpd mode
// and TLS mode, closedport, backlog, the DNS fixture's names, the proxies
// and the hostile servers.
func fixtureCases(t *testing.T, pki *pkifix.PKI, dnsAddr string) []diffCase {
	var cases []diffCase
	add := func(c diffCase) { cases = append(cases, c) }
	httpd := func(o fixture.HTTPOptions) *fixture.HTTPServer {
		if o.TLS != fixture.TLSNone {
			o.PKI = pki
		}
		s, err := fixture.NewHTTPServer(t, o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ok := httpd(fixture.HTTPOptions{})
	add(diffCase{name: "httpd/ok", url: ok.URL + "/health"})
	add(diffCase{name: "httpd/503", url: httpd(fixture.HTTPOptions{Status: 503}).URL + "/health"})
	add(diffCase{name: "httpd/404", url: httpd(fixture.HTTPOptions{Status: 404}).URL + "/health"})
	add(diffCase{name: "httpd/redirect", url: httpd(fixture.HTTPOptions{Redirect: "/elsewhere"}).URL + "/health"})
	for _, m := range fixture.Modes {
		add(diffCase{name: "httpd/" + string(m), url: httpd(fixture.HTTPOptions{Mode: m}).URL + "/health"})
	}
	for _, m := range fixture.TLSModes {
		s := httpd(fixture.HTTPOptions{TLS: m})
		add(diffCase{name: "tls/" + string(m), url: s.URL + "/health", cacert: pki.CAFile})
	}
	cc := httpd(fixture.HTTPOptions{TLS: fixture.TLSClientCert})
	add(diffCase{name: "tls/clientcert-given", url: cc.URL + "/health", cacert: pki.CAFile, cert: pki.ClientCertFile, key: pki.ClientKeyFile})
	add(diffCase{name: "tls/not-tls", url: strings.Replace(ok.URL, "http://", "https://", 1) + "/health", cacert: pki.CAFile})
	for _, f := range tlsfix.TLSFaults {
		s, err := tlsfix.NewTLSFaultServer(t, pki, f)
		if err != nil {
			t.Fatal(err)
		}
		c := diffCase{name: "tls/" + string(f), url: "https://" + s.Addr + "/health", cacert: pki.CAFile}
		if f == tlsfix.TLSMustStaple || f.Stapler() {
			// healthctl reads the staple as curl --cert-status does.
			c.curl = []string{"--cert-status"}
		}
		add(c)
		if f == tlsfix.TLSCertRequired12 {
			add(diffCase{name: "tls/clientcert12-given", url: "https://" + s.Addr + "/health", cacert: pki.CAFile, cert: pki.ClientCertFile, key: pki.ClientKeyFile})
		}
	}

	cp, err := fixture.NewClosedPort(t)
	if err != nil {
		t.Fatal(err)
	}
	add(diffCase{name: "net/closedport", url: cp.URL() + "/health"})
	bl, err := fixture.NewBacklog(t)
	if err != nil {
		t.Fatal(err)
	}
	add(diffCase{name: "net/backlog", url: bl.URL() + "/health"})
	v6 := httpd(fixture.HTTPOptions{IPv6: true})
	add(diffCase{name: "net/localhost-v6-only", url: fmt.Sprintf("http://localhost:%d/health", v6.Port)})

	port := strconv.Itoa(ok.Port)
	for _, n := range []string{"app", "nx", "empty", "servfail", "silent", "refused", "formerr", "notimp", "tc", "garbled"} {
		add(diffCase{name: "dns/" + n, url: "http://" + n + ".invalid:" + port + "/health", dns: dnsAddr})
	}
	deadDNS, err := fixture.NewClosedPort(t)
	if err != nil {
		t.Fatal(err)
	}
	add(diffCase{name: "dns/resolver-closed", url: "http://app.invalid:" + port + "/health", dns: deadDNS.Addr})

	good := httpd(fixture.HTTPOptions{TLS: fixture.TLSGood})
	px, err := proxyfix.NewHTTPProxy(t)
	if err != nil {
		t.Fatal(err)
	}
	add(diffCase{name: "proxy/good-http", url: ok.URL + "/health", proxy: px.URL})
	add(diffCase{name: "proxy/good-https", url: good.URL + "/health", proxy: px.URL, cacert: pki.CAFile})
	add(diffCase{name: "proxy/closed-http", url: ok.URL + "/health", proxy: cp.URL()})
	add(diffCase{name: "proxy/closed-https", url: good.URL + "/health", proxy: cp.URL(), cacert: pki.CAFile})
	for _, f := range hostile.ProxyFaults {
		bp, err := hostile.NewBadProxy(t, nil, f)
		if err != nil {
			t.Fatal(err)
		}
		add(diffCase{name: "proxy/" + string(f) + "-http", url: ok.URL + "/health", proxy: "http://" + bp.Addr})
		add(diffCase{name: "proxy/" + string(f) + "-https", url: good.URL + "/health", proxy: "http://" + bp.Addr, cacert: pki.CAFile})
	}

	big := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range hostile.HoldModes {
		s, err := hostile.NewHoldServer(t, nil, m)
		if err != nil {
			t.Fatal(err)
		}
		add(diffCase{name: "hold/" + string(m), url: "http://" + s.Addr + "/health"})
		if m == hostile.Hold413 {
			// An upload refused on its head and never read.
			add(diffCase{name: "hold/413-bigdata", url: "http://" + s.Addr + "/health", dataFile: big})
		}
	}
	cert, err := pki.ServerCertificate(pkifix.CertGood)
	if err != nil {
		t.Fatal(err)
	}
	h2c := healthctlHas(t, "--http2-prior-knowledge")
	for _, m := range h2fixture.Modes {
		s, err := h2fixture.New(t, m, &cert)
		if err != nil {
			t.Fatal(err)
		}
		add(diffCase{name: "h2/" + string(m), url: "https://" + s.Addr + "/health", cacert: pki.CAFile})
		if m != h2fixture.Window0End {
			// (A small body to a complete answer races curl's own
			// write: sometimes it waits for the window, sometimes not.)
			add(diffCase{name: "h2/" + string(m) + "-data", url: "https://" + s.Addr + "/health", cacert: pki.CAFile, data: "x=1"})
		}
		add(diffCase{name: "h2/" + string(m) + "-bigdata", url: "https://" + s.Addr + "/health", cacert: pki.CAFile, dataFile: big})
		if !h2c {
			continue
		}
		c, err := h2fixture.New(t, m, nil)
		if err != nil {
			t.Fatal(err)
		}
		add(diffCase{name: "h2c/" + string(m) + "-bigdata", url: "http://" + c.Addr + "/health", h2c: true, dataFile: big})
	}
	return cases
}

// sweepAgrees runs the cases a sweep can run through one `healthctl watch
// --once`, each a target of one targets file with the case's own options
// as its keys (targetKeys: DNS server, CA, client certificate, body,
// HTTP/2, conditions, headers, --resolve), and holds each target's verdict
// to curl's answer for the case, as TestCurlDiff holds probe's: a sweep's
// probes run under its workers' closer (probe.WithCloser), take the URL
// text its entries rendered, and build each entry's options from the file
// (targets without keys of their own share one template), none of which
// `probe` does. Targets with and without options sit side by side, so a
// sweep that drops a target's option, or gives it to another, fails. Only
// the cases where probe agreed with curl and no disagreement is
// documented; when one disagrees the whole sweep is run again, twice at
// most (a real stack on a loaded machine fails a request now and then),
// and a target that disagrees every time fails the test.
func sweepAgrees(t *testing.T, hc, dir string, cases []diffCase, results []diffResult, allowed map[string]string) {
	t.Helper()
	var idx []int
	keys := map[int][]string{}
	own := 0
	for i, c := range cases {
		_, listed := allowed[c.name]
		k, ok := targetKeys(c)
		if ok && !listed && curlAgrees(results[i]) {
			idx = append(idx, i)
			keys[i] = k
			if len(k) > 0 {
				own++
			}
		}
	}
	if len(idx) == 0 {
		t.Log("sweep vs curl: no case a sweep can run as it is")
		return
	}
	sweep := func(which []int) map[int]diffResult {
		var f strings.Builder
		f.WriteString("targets:\n")
		for _, i := range which {
			fmt.Fprintf(&f, "  - name: case-%d\n    url: %s\n", i, strconv.Quote(cases[i].url))
			for _, k := range keys[i] {
				fmt.Fprintf(&f, "    %s\n", k)
			}
		}
		file := filepath.Join(dir, fmt.Sprintf("sweep-targets-%d.yaml", len(which)))
		if err := os.WriteFile(file, []byte(f.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		// Each probe is bounded by --max-time; four at a time, as the
		// cases above run.
		limit := time.Duration(len(which)/4+2)*diffMaxTime + 20*time.Second
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		cmd := exec.CommandContext(ctx, hc, "watch", "--once", "-o", "json", "--concurrency", "4",
			"--connect-timeout", diffConnect.String(), "--read-timeout", "2s", "--max-time", diffMaxTime.String(), "--targets", file)
		cmd.Env = diffEnv(dir, "")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		ran := [2]time.Time{time.Now()}
		cmd.Run() // its exit code is the fleet's: the lines say each target's verdict
		ran[1] = time.Now()
		got := map[int]diffResult{}
		for line := range strings.SplitSeq(out.String(), "\n") {
			var j hcJSON
			if json.Unmarshal([]byte(line), &j) != nil || j.Target == "" {
				continue
			}
			var i int
			if _, err := fmt.Sscanf(j.Target, "case-%d", &i); err != nil {
				continue
			}
			r := results[i] // curl's side of the case
			j.into(&r)
			r.hcRan = ran
			got[i] = r
		}
		if ctx.Err() != nil || len(got) != len(which) {
			t.Fatalf("watch --once over %d cases printed %d targets (%v); stderr: %s", len(which), len(got), ctx.Err(), errOut.String())
		}
		return got
	}
	got := sweep(idx)
	final := maps.Clone(got)
	var bad []int
	for _, i := range idx {
		if !curlAgrees(got[i]) {
			bad = append(bad, i)
		}
	}
	// The same sweep again, whole: a target run alone would have no
	// neighbours whose options it could be given.
	for attempt := 0; attempt < 2 && len(bad) > 0; attempt++ {
		again := sweep(idx)
		var still []int
		for _, i := range bad {
			final[i] = again[i]
			if !curlAgrees(again[i]) {
				still = append(still, i)
			}
		}
		bad = still
	}
	disagree := len(bad)
	for _, i := range bad {
		r := final[i]
		t.Errorf("case %s: in a sweep healthctl says %s, curl %s (probe agreed: %s)\n  healthctl: %s",
			cases[i].name, r.hcText(), r.curlText(), results[i].hcText(), r.hcErr)
	}
	seen := map[string]int{}
	for _, i := range idx {
		seen[got[i].outcome+"/"+got[i].reason]++
	}
	t.Logf("sweep vs curl: %d cases in one watch --once (%d with options of their own), %d disagree; verdicts %v", len(idx), own, disagree, seen)
}

// targetKeys writes a case's own options as the keys of its entry in a
// targets file (docs/watch.md), one "key: value" a line, and says whether
// all of them can be: a proxy is the environment's, the same for every
// target of a sweep, and an extra healthctl argument other than -H and
// --resolve has no key here. (curl's own extra arguments are curl's.)
func targetKeys(c diffCase) ([]string, bool) {
	if c.proxy != "" {
		return nil, false
	}
	var keys []string
	one := func(key, v string) {
		if v != "" {
			keys = append(keys, key+": "+strconv.Quote(v))
		}
	}
	list := func(key string, vs []string) {
		if len(vs) == 0 {
			return
		}
		q := make([]string, len(vs))
		for i, v := range vs {
			q[i] = strconv.Quote(v)
		}
		keys = append(keys, key+": ["+strings.Join(q, ", ")+"]")
	}
	var headers, resolve []string
	for i := 0; i < len(c.hc); i += 2 {
		if i+1 == len(c.hc) {
			return nil, false
		}
		switch c.hc[i] {
		case "-H":
			headers = append(headers, c.hc[i+1])
		case "--resolve":
			resolve = append(resolve, c.hc[i+1])
		default:
			return nil, false
		}
	}
	one("dns_server", c.dns)
	one("cacert", c.cacert)
	one("cert", c.cert)
	one("key", c.key)
	one("data", c.data)
	if c.dataFile != "" {
		one("data", "@"+c.dataFile)
	}
	if c.h2c {
		keys = append(keys, "http2_prior_knowledge: true")
	}
	list("headers", headers)
	list("resolve", resolve)
	list("expect_body", c.expectBody)
	list("expect_body_regex", c.expectRegex)
	list("expect_header", c.expectHeader)
	list("expect_json", c.expectJSON)
	return keys, true
}
