package waitcmd

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/report"
	"github.com/healthctl/healthctl/internal/wait"

	"github.com/healthctl/healthctl/internal/words"
)

// waitJSON is wait-healthy's final object: it adds healthy,
// fail_open, bypassed, attempts, elapsed_ms and last (the last completed
// probe per URL, in argument order; null for a URL none completed for).
type waitJSON struct {
	SchemaVersion int  `json:"schema_version"`
	Healthy       bool `json:"healthy"`
	// UntilDown and Down: --until-down, and every URL stopped answering
	// healthy (healthy is then false: the URLs are not).
	UntilDown bool                 `json:"until_down,omitempty"`
	Down      bool                 `json:"down,omitempty"`
	FailOpen  bool                 `json:"fail_open"`
	Bypassed  bool                 `json:"bypassed"`
	Attempts  int                  `json:"attempts"`
	ElapsedMS float64              `json:"elapsed_ms"`
	ExitCode  int                  `json:"exit_code"`
	Last      []*report.ResultJSON `json:"last"`
}

// waitResult is the wait's verdict: the final object, or in text the first
// line of each URL once all are healthy (the failure is the run's error
// line, on stderr).
type waitResult struct {
	sum      *wait.Summary // nil: bypassed
	bypassed bool
	code     int
	codeOf   func(classify.Outcome) int
}

func (r *waitResult) Docs(render.Writer) render.Docs {
	return render.One(newWaitJSON(r.sum, r.bypassed, r.code, r.codeOf))
}

func (r *waitResult) Text(w render.Writer) error {
	if r.sum == nil || !r.sum.Healthy || w.Quiet {
		return nil
	}
	for _, t := range r.sum.Endpoints {
		fmt.Fprintln(w.Out, report.FirstLine(*t.Last, w.OutColor))
		if w.Verbose {
			report.Details(w.Out, *t.Last, nil, w.OutColor)
		}
	}
	return nil
}

// newWaitJSON builds the final object; exitCode maps an outcome to its exit
// code (each last result carries its own).
func newWaitJSON(s *wait.Summary, bypassed bool, code int, exitCode func(classify.Outcome) int) waitJSON {
	j := waitJSON{
		SchemaVersion: output.SchemaVersion,
		Bypassed:      bypassed,
		ExitCode:      code,
		Last:          []*report.ResultJSON{},
	}
	if s == nil {
		return j
	}
	j.Healthy, j.FailOpen, j.Attempts, j.ElapsedMS = s.Healthy, s.TimedOut && s.FailOpen, s.Attempts, output.JSONMillis(s.Elapsed)
	if s.UntilDown {
		j.Healthy, j.UntilDown, j.Down = false, true, s.Healthy
	}
	for _, t := range s.Endpoints {
		if t.Last == nil {
			j.Last = append(j.Last, nil)
			continue
		}
		r := report.NewResultJSON(*t.Last, nil, exitCode(t.Last.Outcome))
		// --all-addresses: each address's code as --exit-1 decides it,
		// as probe's and watch's JSON say.
		for i := range r.Addresses {
			r.Addresses[i].ExitCode = exitCode(t.Last.Addresses[i].Outcome)
		}
		j.Last = append(j.Last, &r)
	}
	return j
}

// ProgressEvery is the longest a log without a terminal goes without a
// line from wait-healthy: a CI log that has been silent for a minute looks
// hung, so while nothing changes, a "still" line per URL waited for says
// what it last answered, after how many attempts, and how long is left.
const ProgressEvery = 10 * time.Second

// waitProgress renders wait-healthy's progress on stderr: on a terminal one
// status line rewritten in place; otherwise one line per change of outcome
// (or reason) per URL, never one per attempt, so CI logs stay short, and
// at least one line every ProgressEvery (Heartbeat) so they show it is
// alive.
type waitProgress struct {
	w         io.Writer
	tty       bool
	colored   bool
	successes int
	// timeout is the ceiling, for the time left in the "still" lines.
	timeout time.Duration
	// urls are the (redacted) URLs waited for, in argument order.
	urls []string
	// untilDown: --until-down, a URL done is down.
	untilDown bool
	// width is the terminal's; the status line is kept shorter than it so
	// "\r" can redraw it (a wrapped line leaves debris behind).
	width int

	mu     sync.Mutex
	last   []*wait.Event
	shown  bool
	closed bool
	// lastLine is when (since the wait began) the last line was written
	// without a terminal.
	lastLine time.Duration
}

// newWaitProgress renders the progress of a wait on n URLs; width is the
// terminal's width in columns (0: unknown, 80 is assumed).
func newWaitProgress(w io.Writer, tty, colored bool, width int, urls []string, successes int, timeout time.Duration) *waitProgress {
	if width <= 0 {
		width = 80
	}
	return &waitProgress{w: w, tty: tty, colored: colored, width: width, successes: successes, timeout: timeout, urls: urls, last: make([]*wait.Event, len(urls))}
}

// Event records one completed probe (wait.Config.Observer).
func (p *waitProgress) Event(e wait.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.last[e.Index] = &e
	if p.tty {
		p.status(e.Elapsed)
		return
	}
	if e.Changed {
		fmt.Fprintln(p.w, p.changeLine(e))
		p.lastLine = max(p.lastLine, e.Elapsed)
	}
}

// NextHeartbeat is when (since the wait began) a log without a terminal
// is next due a line if nothing changes before.
func (p *waitProgress) NextHeartbeat() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastLine + ProgressEvery
}

// Heartbeat writes, without a terminal and when no line came for
// ProgressEvery, one "still" line per URL not yet healthy:
// "[10.0s] http://x/health still unreachable http_status 503 (attempt 20, 20.0s left)".
func (p *waitProgress) Heartbeat(elapsed time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty || p.closed || elapsed < p.lastLine+ProgressEvery {
		return
	}
	left := output.Seconds(max(0, p.timeout-elapsed))
	for i, e := range p.last {
		if e == nil {
			// Its first probe has not completed (a connect that hangs).
			fmt.Fprintf(p.w, "[%s] %s still waiting (no probe completed, %s left)\n", output.Seconds(elapsed), output.Untrusted(output.DisplayURL(p.urls[i])), left)
			continue
		}
		if e.Done {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "[%s] %s still %s (attempt %d", output.Seconds(elapsed), output.Untrusted(output.DisplayURL(e.URL)), p.outcome(e.Result), e.Attempt)
		if p.counts(e.Result) && p.successes > 1 {
			fmt.Fprintf(&b, ", %d/%d in a row", e.Streak, p.successes)
		}
		fmt.Fprintf(&b, ", %s left)", left)
		fmt.Fprintln(p.w, b.String())
	}
	p.lastLine = elapsed
}

// Tick refreshes the terminal status line's elapsed time between probes.
func (p *waitProgress) Tick(elapsed time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && !p.closed {
		p.status(elapsed)
	}
}

// Close clears the status line; no more output follows from p.
func (p *waitProgress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.shown {
		io.WriteString(p.w, "\r\x1b[K")
	}
	p.closed = true
}

// changeLine is "[0.6s] http://x/health unreachable http_status 503 (attempt 2, retry-after 2.0s)".
func (p *waitProgress) changeLine(e wait.Event) string {
	r := e.Result
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s %s", output.Seconds(e.Elapsed), output.Untrusted(output.DisplayURL(e.URL)), p.outcome(r))
	fmt.Fprintf(&b, " (attempt %d", e.Attempt)
	if p.counts(r) && !e.NeverUp && p.successes > 1 {
		fmt.Fprintf(&b, ", %d/%d in a row", e.Streak, p.successes)
	}
	if e.NeverUp {
		b.WriteString(", not seen up yet: not counted as down")
	}
	if r.RetryAfter != nil {
		fmt.Fprintf(&b, ", retry-after %s", output.Seconds(*r.RetryAfter))
	}
	b.WriteString(")")
	return b.String()
}

// outcome is "pass ok 200" or "unreachable http_status 503", coloured.
func (p *waitProgress) outcome(r probe.Result) string {
	c := output.Paint(p.colored, color.FgRed)
	if r.Outcome == classify.Pass {
		c = output.Paint(p.colored, color.FgGreen)
	}
	s := c.Sprint(r.Outcome) + " " + string(r.Reason)
	if r.HTTPStatus != 0 {
		s += fmt.Sprintf(" %d", r.HTTPStatus)
	}
	return s
}

// status rewrites the terminal line: the first URL still waited for, with
// the elapsed time, its attempts, last outcome and Retry-After.
func (p *waitProgress) status(elapsed time.Duration) {
	var cur *wait.Event
	done, attempts := 0, 0
	for _, e := range p.last {
		if e == nil {
			continue
		}
		attempts += e.Attempt
		if e.Done {
			done++
		} else if cur == nil {
			cur = e
		}
	}
	head := fmt.Sprintf("waiting %s, %s", output.Seconds(elapsed), words.Plural(attempts, "attempt"))
	if len(p.last) > 1 {
		word := "healthy"
		if p.untilDown {
			word = "down"
		}
		head += fmt.Sprintf(", %d/%d %s", done, len(p.last), word)
	}
	line := "\r\x1b[K" + head
	if cur != nil {
		line += ": " + p.fit(output.Untrusted(output.DisplayURL(cur.URL)), cur, p.width-1-utf8.RuneCountInString(head)-len(": "))
	} else if utf8.RuneCountInString(head) > p.width-1 {
		line = "\r\x1b[K" + output.ShortenRunes(head, p.width-1)
	}
	io.WriteString(p.w, line)
	p.shown = true
}

// fit renders "URL outcome reason status, extras" in at most room columns.
// The host stays visible: the details go first (retry-after and the streak,
// then the reason), then the path is elided in the middle, and only a host
// that cannot fit alone is cut.
func (p *waitProgress) fit(url string, e *wait.Event, room int) string {
	r := e.Result
	extra := ""
	if p.counts(r) && !e.NeverUp && p.successes > 1 {
		extra += fmt.Sprintf(" (%d/%d in a row)", e.Streak, p.successes)
	}
	if ra := r.RetryAfter; ra != nil {
		extra += fmt.Sprintf(", retry-after %s", output.Seconds(*ra))
	}
	status := ""
	if r.HTTPStatus != 0 {
		status = fmt.Sprintf(" %d", r.HTTPStatus)
	}
	c := output.Paint(p.colored, color.FgRed)
	if r.Outcome == classify.Pass {
		c = output.Paint(p.colored, color.FgGreen)
	}
	variants := []struct{ plain, shown string }{
		{string(r.Outcome) + " " + string(r.Reason) + status + extra, c.Sprint(r.Outcome) + " " + string(r.Reason) + status + extra},
		{string(r.Outcome) + " " + string(r.Reason) + status, c.Sprint(r.Outcome) + " " + string(r.Reason) + status},
		{string(r.Outcome) + status, c.Sprint(r.Outcome) + status},
	}
	if status != "" {
		variants = append(variants, struct{ plain, shown string }{status[1:], c.Sprint(status[1:])})
	}
	host := originOf(url)
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	need := min(utf8.RuneCountInString(url), utf8.RuneCountInString(host)+1)
	for i, v := range variants {
		left := room - 1 - utf8.RuneCountInString(v.plain)
		if left >= need || i == len(variants)-1 {
			if left < 1 {
				return output.ShortenRunes(v.plain, room)
			}
			return output.ElideURL(url, left) + " " + v.shown
		}
	}
	return ""
}

// originOf is a URL's scheme, host and port.
func originOf(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		if j := strings.IndexAny(s[i+3:], "/?#"); j >= 0 {
			return s[:i+3+j]
		}
	}
	return s
}

// counts says r counts toward the streak: a pass, or with --until-down
// anything else.
func (p *waitProgress) counts(r probe.Result) bool {
	return (r.Outcome == classify.Pass) != p.untilDown
}
