// Script commands for watch --listen's service (testdata/script/watch_listen_*.txtar):
//
//	chromium URL DOMFILE PNGFILE
//	    renders URL in a real headless Chromium (Debian's chromium; .ci/deps/status.sh
//	    installs it; scripts `require chromium`): the DOM after load to DOMFILE
//	    (--dump-dom) and a screenshot to PNGFILE, which is also copied to
//	    $ARTIFACTS/NAME when ARTIFACTS is set, and to docs/img/NAME when
//	    UPDATE_SCREENSHOTS is set. Chromium gets a fresh --user-data-dir,
//	    --no-sandbox (root in CI), a dead loopback proxy and a host resolver
//	    that answers nothing but loopback, so it can reach nothing else; each
//	    run is bounded by 60s.
//	pageagrees DOMFILE STATUSFILE
//	    fails unless the page's DOM has one row per target of /status.json
//	    (data-target) whose outcome and reason (attributes and visible text)
//	    are the status's, and no <script> element.
//	statusagrees HOSTPORT
//	    reads /status.json and /metrics from a --listen and fails unless every
//	    target's outcome, reason, streak, decision and probe_success agree.
//	httpstatus URL WANT [FILE]
//	    fails unless a GET of URL answers the status WANT (the body to FILE).
//	promquery HOSTPORT QUERY WANT
//	    waits (at most 90s) until a Prometheus at HOSTPORT answers QUERY (an
//	    instant query over its HTTP API) with exactly one sample, of value WANT.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/net/html"

	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/listen/board"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
)

func init() {
	extraCmds["chromium"] = cmdChromium
	extraCmds["pageagrees"] = cmdPageAgrees
	extraCmds["statusagrees"] = cmdStatusAgrees
	extraCmds["httpstatus"] = cmdHTTPStatus
	extraCmds["promquery"] = cmdPromQuery
}

func cmdChromium(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "chromium")
	if len(args) != 3 {
		ts.Fatalf("usage: chromium URL DOMFILE PNGFILE")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		ts.Fatalf("chromium not installed (.ci/deps/status.sh installs it; scripts must `require chromium`)")
	}
	common := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions",
		// Nothing but loopback: every other name fails to resolve, and a
		// request that still left would go to a dead loopback proxy
		// (loopback itself bypasses a proxy in Chromium: no
		// --proxy-bypass-list, whose <-loopback> would undo that).
		"--proxy-server=127.0.0.1:9",
		"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
		"--window-size=1100,760", "--hide-scrollbars"}
	run := func(extra ...string) []byte {
		// A fresh profile each run: a second run on the first's profile
		// exited 0 without its screenshot.
		profile, err := os.MkdirTemp(ts.MkAbs("."), "chromium-profile-")
		ts.Check(err)
		extra = append(extra, "--user-data-dir="+profile)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append(common[:len(common):len(common)], extra...), args[0])...)
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = append(os.Environ(), "HOME="+profile)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Run(); err != nil {
			ts.Fatalf("chromium %v: %v\n%s", extra, err, tail(errb.String(), 2000))
		}
		if len(extra) > 0 && strings.HasPrefix(extra[0], "--screenshot=") {
			if _, err := os.Stat(strings.TrimPrefix(extra[0], "--screenshot=")); err != nil {
				ts.Fatalf("chromium %v wrote no screenshot: %v\n%s%s", extra, err, out.String(), tail(errb.String(), 3000))
			}
		}
		return out.Bytes()
	}
	dom := run("--dump-dom")
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), dom, 0o644))
	shot := ts.MkAbs(args[2])
	run("--screenshot=" + shot)
	f, err := os.Open(shot)
	ts.Check(err)
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		ts.Fatalf("chromium's screenshot %s: %v", args[2], err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		ts.Fatalf("chromium's screenshot is %v", b)
	}
	data, err := os.ReadFile(shot)
	ts.Check(err)
	if dir := os.Getenv("ARTIFACTS"); dir != "" {
		ts.Check(os.MkdirAll(dir, 0o755))
		ts.Check(os.WriteFile(filepath.Join(dir, filepath.Base(shot)), data, 0o644))
		ts.Logf("screenshot kept as %s", filepath.Join(dir, filepath.Base(shot)))
	}
	if os.Getenv("UPDATE_SCREENSHOTS") != "" {
		dst := filepath.Join("..", "..", "docs", "img", filepath.Base(shot))
		ts.Check(os.MkdirAll(filepath.Dir(dst), 0o755))
		ts.Check(os.WriteFile(dst, data, 0o644))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// domRow is one target's row of the page as Chromium's DOM has it.
type domRow struct {
	attrs map[string]string
	text  string
}

func cmdPageAgrees(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "pageagrees")
	if len(args) != 2 {
		ts.Fatalf("usage: pageagrees DOMFILE STATUSFILE")
	}
	dom, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	raw, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	st := readStatus(ts, raw)
	doc, err := html.Parse(bytes.NewReader(dom))
	ts.Check(err)
	rows := map[string]domRow{}
	var walk func(n *html.Node)
	var text func(n *html.Node, b *strings.Builder)
	text = func(n *html.Node, b *strings.Builder) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			text(c, b)
		}
	}
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "script" {
			ts.Fatalf("the page's DOM has a <script> element: server text was not escaped")
		}
		if n.Type == html.ElementNode && n.Data == "tr" {
			a := map[string]string{}
			for _, at := range n.Attr {
				a[at.Key] = at.Val
			}
			if name, ok := a["data-target"]; ok {
				var b strings.Builder
				text(n, &b)
				rows[name] = domRow{attrs: a, text: b.String()}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(st.Targets) == 0 {
		ts.Fatalf("%s has no targets", args[1])
	}
	for _, tg := range st.Targets {
		r, ok := rows[tg.Name]
		if !ok {
			ts.Fatalf("target %q of %s has no row in the page", tg.Name, args[1])
		}
		o, why := string(tg.Outcome), string(tg.Reason)
		if r.attrs["data-outcome"] != o || r.attrs["data-reason"] != why {
			ts.Fatalf("target %q: the page says %s/%s, status.json %s/%s", tg.Name, r.attrs["data-outcome"], r.attrs["data-reason"], o, why)
		}
		if !strings.Contains(r.text, o) || !strings.Contains(r.text, why) || !strings.Contains(r.text, tg.Name) {
			ts.Fatalf("target %q: the row's visible text %q does not show its name, %s and %s", tg.Name, r.text, o, why)
		}
		if tg.Decision != nil && !strings.Contains(r.text, string(tg.Decision.Action)) {
			ts.Fatalf("target %q: the row's text %q does not show its decision %s", tg.Name, r.text, tg.Decision.Action)
		}
	}
	if len(rows) != len(st.Targets) {
		ts.Fatalf("the page has %d rows, status.json %d targets", len(rows), len(st.Targets))
	}
	ts.Logf("the page shows the %d targets of status.json", len(rows))
}

// statusTarget is what the scripts read of a /status.json target: its
// line (watch -o json's object), the name escaped as the page and the
// metrics show it.
type statusTarget struct {
	Name     string           `json:"-"`
	Target   string           `json:"target"`
	Outcome  string           `json:"outcome"`
	Reason   string           `json:"reason"`
	Streak   int              `json:"streak"`
	Decision *policy.Decision `json:"decision"`
}

// readStatus decodes a /status.json document's targets.
func readStatus(ts *testscript.TestScript, raw []byte) (st struct{ Targets []statusTarget }) {
	var doc board.Document
	ts.Check(json.Unmarshal(raw, &doc))
	if len(doc.Board) != len(doc.Targets) {
		ts.Fatalf("/status.json has %d targets, %d board entries", len(doc.Targets), len(doc.Board))
	}
	st.Targets = make([]statusTarget, len(doc.Targets))
	for i, t := range doc.Targets {
		ts.Check(json.Unmarshal(t, &st.Targets[i]))
		st.Targets[i].Name = output.Untrusted(st.Targets[i].Target)
	}
	return st
}

func fetch(ts *testscript.TestScript, u string) (int, []byte) {
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(u)
	ts.Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	ts.Check(err)
	return resp.StatusCode, b
}

func cmdStatusAgrees(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "statusagrees")
	if len(args) != 1 {
		ts.Fatalf("usage: statusagrees HOSTPORT")
	}
	_, raw := fetch(ts, "http://"+args[0]+"/status.json")
	_, mtext := fetch(ts, "http://"+args[0]+"/metrics")
	st := readStatus(ts, raw)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(mtext))
	ts.Check(err)
	// target → the value or label each family gives it.
	seen := map[string]map[string]string{}
	for _, fam := range []string{"healthctl_probe_result", "healthctl_streak", "healthctl_decision", "probe_success"} {
		f := fams[fam]
		if f == nil {
			ts.Fatalf("/metrics has no %s", fam)
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			v := m.GetGauge().GetValue()
			t := labels["target"]
			if seen[t] == nil {
				seen[t] = map[string]string{}
			}
			switch fam {
			case "healthctl_probe_result":
				seen[t]["result"] = labels["outcome"] + "/" + labels["reason"]
			case "healthctl_decision":
				if v == 1 {
					seen[t]["decision"] = labels["decision"]
				}
			default:
				seen[t][fam] = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
	}
	for _, tg := range st.Targets {
		m := seen[tg.Name]
		success := "0"
		if tg.Outcome == "pass" {
			success = "1"
		}
		want := map[string]string{"result": string(tg.Outcome) + "/" + string(tg.Reason), "healthctl_streak": strconv.Itoa(tg.Streak),
			"probe_success": success}
		if tg.Decision != nil {
			want["decision"] = string(tg.Decision.Action)
		}
		for k, v := range want {
			if m[k] != v {
				ts.Fatalf("target %q: /status.json says %s %q, /metrics %q", tg.Name, k, v, m[k])
			}
		}
	}
	if len(seen) != len(st.Targets) {
		ts.Fatalf("/metrics has %d targets, /status.json %d", len(seen), len(st.Targets))
	}
	ts.Logf("/status.json and /metrics agree on %d targets", len(st.Targets))
}

func cmdHTTPStatus(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "httpstatus")
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: httpstatus URL WANT [FILE]")
	}
	code, body := fetch(ts, args[0])
	if len(args) == 3 {
		ts.Check(os.WriteFile(ts.MkAbs(args[2]), body, 0o644))
	}
	if strconv.Itoa(code) != args[1] {
		ts.Fatalf("GET %s: %d %q, want %s", args[0], code, tail(string(body), 300), args[1])
	}
}

func cmdPromQuery(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "promquery")
	if len(args) != 3 {
		ts.Fatalf("usage: promquery HOSTPORT QUERY WANT")
	}
	var last string
	c := &http.Client{Timeout: 5 * time.Second}
	ok := fixture.WaitFor(90*time.Second, func() bool {
		resp, err := c.Get("http://" + args[0] + "/api/v1/query?query=" + url.QueryEscape(args[1]))
		if err != nil {
			last = err.Error()
			return false
		}
		defer resp.Body.Close()
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		last = string(b)
		if json.Unmarshal(b, &r) != nil || r.Status != "success" || len(r.Data.Result) != 1 {
			return false
		}
		return fmt.Sprint(r.Data.Result[0].Value[1]) == args[2]
	})
	if !ok {
		ts.Fatalf("prometheus %s: %s is not one sample of %s within 90s (last: %s)", args[0], args[1], args[2], tail(last, 500))
	}
}
