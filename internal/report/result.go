// Package report renders one probe result for every command that shows
// them (probe, wait-healthy, watch): the stable first line, the details
// (waterfall, certificates, decision), the JSON object, the Nagios line and
// the line of a probe a signal cut short.
package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fatih/color"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
)

// ResultJSON is one probe result as JSON (public names: added, never renamed). Fields a probe did
// not reach are absent, never zero.
type ResultJSON struct {
	SchemaVersion int                 `json:"schema_version"`
	Target        string              `json:"target,omitempty"`
	URL           string              `json:"url"`
	Outcome       classify.Outcome    `json:"outcome"`
	Reason        classify.Reason     `json:"reason"`
	ExitCode      int                 `json:"exit_code"`
	HTTPStatus    int                 `json:"http_status,omitempty"`
	HTTPVersion   string              `json:"http_version,omitempty"`
	Error         string              `json:"error,omitempty"`
	Address       string              `json:"address,omitempty"`
	IPFamily      int                 `json:"ip_family,omitempty"`
	TimingsMS     Millis              `json:"timings_ms"`
	Redirect      *probe.Redirect     `json:"redirect,omitempty"`
	Redirects     []probe.Hop         `json:"redirects,omitempty"`
	Proxy         string              `json:"proxy,omitempty"`
	DialAttempts  []probe.DialAttempt `json:"dial_attempts,omitempty"`
	// DialErrors is the field scripts knew first: the attempts, when every
	// address of the name failed (public names are added, never renamed).
	DialErrors    []probe.DialAttempt `json:"dial_errors,omitempty"`
	RetryAfterS   *float64            `json:"retry_after_s,omitempty"`
	BodyTruncated bool                `json:"body_truncated"`
	// BodyExcerpt is the start of a failing answer's body (at most 512
	// bytes, redacted; "…" when more followed); WWWAuthenticate and
	// ProxyAuthenticate its challenges.
	BodyExcerpt       string `json:"body_excerpt,omitempty"`
	WWWAuthenticate   string `json:"www_authenticate,omitempty"`
	ProxyAuthenticate string `json:"proxy_authenticate,omitempty"`
	// Degraded says why a pass is degraded (reason degraded).
	Degraded string `json:"degraded,omitempty"`
	// HTTPSDowngrade: a redirect went from https to plain http.
	HTTPSDowngrade bool           `json:"https_downgrade,omitempty"`
	TLS            *probe.TLSInfo `json:"tls,omitempty"`
	// ProxyTLS is an https:// proxy's own handshake: its version,
	// cipher and chain, apart from the target's.
	ProxyTLS *probe.TLSInfo `json:"proxy_tls,omitempty"`
	// Answer is what the server of a kind other than HTTP said: its
	// JSON object stands under the kind's name ("grpc", "redis",
	// "postgres"), here, before the decision (MarshalJSON).
	Answer   classify.Answer  `json:"-"`
	Decision *policy.Decision `json:"decision,omitempty"`
	// Addresses is one object per address with --all-addresses (the
	// object itself is then the worst of them, its error the summary).
	Addresses []ResultJSON `json:"addresses,omitempty"`
}

// NewResultJSON converts a result, with its decision (may be nil) and the
// exit code it maps to.
func NewResultJSON(r probe.Result, d *policy.Decision, exitCode int) ResultJSON {
	var j ResultJSON
	j.Fill(r, d, exitCode)
	return j
}

// Fill makes j what NewResultJSON makes of r (a writer of thousands of
// lines fills one ResultJSON again and again).
func (j *ResultJSON) Fill(r probe.Result, d *policy.Decision, exitCode int) {
	*j = ResultJSON{
		SchemaVersion: output.SchemaVersion,
		URL:           output.DisplayURL(r.URL), // an IDN host in Unicode, as the text shows it
		Outcome:       r.Outcome,
		Reason:        r.Reason,
		ExitCode:      exitCode,
		HTTPStatus:    r.HTTPStatus,
		HTTPVersion:   r.HTTPVersion,
		Error:         output.Untrusted(r.Error), // the server's words may reach it: escaped as in the text
		Address:       r.Address,
		IPFamily:      r.IPFamily,
		TimingsMS:     Millis(r.Timings),
		Redirect:      r.Redirect,
		Redirects:     r.Hops,
		Proxy:         r.Proxy,
		DialAttempts:  r.DialAttempts,
		BodyTruncated: r.BodyTruncated,
		// The server's words: escaped as in the text.
		BodyExcerpt:       output.Untrusted(r.BodyExcerpt),
		WWWAuthenticate:   output.Untrusted(r.WWWAuthenticate),
		ProxyAuthenticate: output.Untrusted(r.ProxyAuthenticate),
		Degraded:          output.Untrusted(r.Degraded),
		HTTPSDowngrade:    r.Downgrade,
		TLS:               r.TLS,
		ProxyTLS:          r.ProxyTLS,
		Answer:            r.Answer,
		Decision:          d,
	}
	if allFailed(r.DialAttempts) {
		j.DialErrors = r.DialAttempts
	}
	if r.RetryAfter != nil {
		s := r.RetryAfter.Seconds()
		j.RetryAfterS = &s
	}
	for _, a := range r.Addresses {
		j.Addresses = append(j.Addresses, NewResultJSON(a, nil, exitcode.ForResult(a.Outcome, a.Reason)))
	}
}

// FoldAddresses applies a command's --exit-1 decision (fold) to the
// per-address exit codes of --all-addresses, as to the run's own: with
// --exit-1 every command's JSON says 1 for each failed address, never 5
// in one command and 1 in another.
func (j *ResultJSON) FoldAddresses(fold func(int) int) {
	for i := range j.Addresses {
		j.Addresses[i].ExitCode = fold(j.Addresses[i].ExitCode)
	}
}

// ms is a duration in fractional milliseconds, to the microsecond.

// FirstLine is the stable, greppable summary of a result:
// "PASS ok URL 200 12.4ms" or "FAIL refused conn_refused URL - 0.4ms".
func FirstLine(r probe.Result, colored bool) string {
	status := "-"
	switch {
	case r.HTTPStatus != 0:
		status = strconv.Itoa(r.HTTPStatus)
	case r.Answer != nil && r.Answer.Status() != "":
		// A kind's answer (a gRPC health status) stands where HTTP's
		// status would.
		status = r.Answer.Status()
	}
	total := output.FormatMS(r.Timings.Of(probe.PhaseTotal))
	// Joined, not formatted: fmt's first use costs every probe ~15 us.
	url := output.Untrusted(output.DisplayURL(r.URL))
	if r.Outcome == classify.Pass {
		return output.PaintString(colored, "PASS", color.FgGreen, color.Bold) + " " + string(r.Reason) + " " + url + " " + status + " " + total + notVerified(r, colored)
	}
	return output.PaintString(colored, "FAIL", color.FgRed, color.Bold) + " " +
		output.PaintString(colored, string(r.Outcome), color.FgRed) + " " + string(r.Reason) + " " + url + " " + status + " " + total + notVerified(r, colored)
}

// notVerified is the first line's mark of a chain not verified because
// verification was off — " (not verified: HEALTHCTL_INSECURE)", naming
// where the switch came from — or "": a leftover variable must not turn
// certificate checks off without a word.
func notVerified(r probe.Result, colored bool) string {
	if r.TLS == nil || r.TLS.NotVerified == "" {
		return ""
	}
	return " " + output.PaintString(colored, "(not verified: "+output.Untrusted(r.TLS.NotVerified)+")", color.FgYellow)
}

// Details renders what follows the first line on a terminal or with -v: the
// error, the connection, the waterfall, the certificate chain, the redirect
// and the decision.
func Details(w io.Writer, r probe.Result, d *policy.Decision, colored bool) {
	dim := output.Paint(colored, color.Faint)
	label := func(s string) string {
		if len(s) >= 11 {
			return dim.Sprint("  "+s) + " " // never run into the value
		}
		return dim.Sprintf("  %-11s", s)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "%s%s\n", label("error"), output.Untrusted(r.Error))
	}
	if r.Degraded != "" {
		fmt.Fprintf(w, "%s%s\n", label("degraded"), output.Untrusted(r.Degraded))
	}
	if r.Address != "" {
		conn := fmt.Sprintf("%s (IPv%d)", r.Address, r.IPFamily)
		if r.Proxy != "" {
			conn = fmt.Sprintf("%s (IPv%d, the proxy %s)", r.Address, r.IPFamily, r.Proxy)
		}
		if r.HTTPVersion != "" {
			conn += " " + r.HTTPVersion
		}
		fmt.Fprintf(w, "%s%s\n", label("address"), conn)
	}
	for _, a := range r.DialAttempts {
		how := a.Error
		if how == "" {
			how = "connected"
		}
		fmt.Fprintf(w, "%s%s: %s (%s)\n", label("tried"), a.Address, output.Untrusted(how), output.FormatMS(a.Duration))
	}
	if a := r.Answer; a != nil {
		// What the kind's server answered, as it said it.
		for _, l := range a.Lines() {
			fmt.Fprintf(w, "%s%s\n", label(a.Kind().Name), output.Untrusted(l))
		}
	}
	waterfall(w, r.Timings, label, output.Paint(colored, color.FgCyan))
	if pt := r.ProxyTLS; pt != nil {
		// The proxy's own handshake, named as the proxy's.
		if pt.Version != "" {
			fmt.Fprintf(w, "%s%s %s\n", label("proxy tls"), pt.Version, pt.Cipher)
		}
		if pt.NotVerified != "" {
			fmt.Fprintf(w, "%s%s\n", label("proxy verified"), output.Paint(colored, color.FgYellow).Sprintf("no: verification is off (%s)", output.Untrusted(pt.NotVerified)))
		}
		for i, c := range pt.Chain {
			fmt.Fprintf(w, "%s%s\n", label(fmt.Sprintf("proxy cert[%d]", i)), output.Untrusted(c.Subject))
			fmt.Fprintf(w, "%sissuer %s; SANs %s; expires %s (%d days left)\n", label(""), output.Untrusted(c.Issuer),
				output.Untrusted(strings.Join(c.SANs, ", ")), c.NotAfter.Format("2006-01-02"), c.DaysLeft)
		}
	}
	if r.TLS != nil {
		if r.TLS.Version != "" {
			fmt.Fprintf(w, "%s%s %s\n", label("tls"), r.TLS.Version, r.TLS.Cipher)
		}
		if r.TLS.NotVerified != "" {
			fmt.Fprintf(w, "%s%s\n", label("verified"), output.Paint(colored, color.FgYellow).Sprintf("no: verification is off (%s); the chain below was not checked", output.Untrusted(r.TLS.NotVerified)))
		}
		for i, c := range r.TLS.Chain {
			exp := fmt.Sprintf("expires %s (%d days left)", c.NotAfter.Format("2006-01-02"), c.DaysLeft)
			switch {
			case c.DaysLeft < 0:
				exp = output.Paint(colored, color.FgRed).Sprintf("expired %s", c.NotAfter.Format("2006-01-02"))
			case (r.Reason == classify.TLSNotYetValid && i == 0) || (!r.Started.IsZero() && r.Started.Before(c.NotBefore)):
				exp = output.Paint(colored, color.FgRed).Sprintf("not valid before %s", c.NotBefore.Format(time.RFC3339))
			}
			fmt.Fprintf(w, "%s%s\n", label(fmt.Sprintf("cert[%d]", i)), output.Untrusted(c.Subject))
			fmt.Fprintf(w, "%sissuer %s; SANs %s; %s\n", label(""), output.Untrusted(c.Issuer), output.Untrusted(strings.Join(c.SANs, ", ")), exp)
			if c.StapleMissing {
				fmt.Fprintf(w, "%s%s\n", label(""), output.Paint(colored, color.FgYellow).Sprint("must-staple, but the server sent no OCSP staple (browsers refuse it)"))
			}
		}
	}
	if r.TLS != nil && r.TLS.OCSP != nil {
		fmt.Fprintf(w, "%s%s\n", label("ocsp"), ocspText(r.TLS.OCSP, colored))
	}
	for i, h := range r.Hops {
		fmt.Fprintf(w, "%s%d %s -> %s\n", label(fmt.Sprintf("hop[%d]", i)), h.Status, output.Untrusted(h.URL), output.Untrusted(h.Location))
	}
	if r.Redirect != nil {
		other := ""
		if r.Redirect.OtherHost {
			other = output.Paint(colored, color.FgYellow).Sprint(" (another host)")
		}
		fmt.Fprintf(w, "%s-> %s%s\n", label("redirect"), output.Untrusted(r.Redirect.Location), other)
	}
	if r.Downgrade {
		fmt.Fprintf(w, "%s%s\n", label("downgrade"), output.Paint(colored, color.FgYellow).Sprint("a redirect went from https to plain http"))
	}
	if r.RetryAfter != nil {
		fmt.Fprintf(w, "%s%s\n", label("retry-after"), output.Seconds(*r.RetryAfter))
	}
	for _, a := range challenges(r) {
		fmt.Fprintf(w, "%s%s\n", label(a[0]), output.Untrusted(a[1]))
	}
	if r.BodyExcerpt != "" {
		fmt.Fprintf(w, "%s%s\n", label("body"), output.Untrusted(r.BodyExcerpt))
	}
	if r.BodyTruncated {
		fmt.Fprintf(w, "%sbody read up to --max-body only\n", label("body"))
	}
	if d != nil {
		c := output.Paint(colored, color.Bold)
		fmt.Fprintf(w, "%s%s: %s\n", label("decision"), c.Sprint(d.Action), d.Why)
	}
}

// ocspText says what the stapled OCSP response said: "good (stapled, next
// update …)", "revoked at …", "… but stale (next update … passed)".
func ocspText(o *probe.OCSP, colored bool) string {
	const day = "2006-01-02 15:04:05Z07:00"
	var s string
	switch o.Status {
	case "good":
		s = "good (stapled, next update " + o.NextUpdate.Format(day) + ")"
	case "revoked":
		s = output.Paint(colored, color.FgRed).Sprint("revoked at " + o.RevokedAt.Format(day))
	case "unknown":
		s = output.Paint(colored, color.FgYellow).Sprint("unknown (the responder does not know this certificate)")
	default:
		s = output.Paint(colored, color.FgYellow).Sprint(o.Status)
	}
	if o.Stale {
		s = output.Paint(colored, color.FgYellow).Sprintf("%s, but stale (next update %s passed)", o.Status, o.NextUpdate.Format(day))
	}
	if o.Error != "" {
		s += ": " + output.Untrusted(o.Error)
	}
	return s
}

// Answer writes, after a failing result's first line without details,
// what the server said of why: its error sentence, its challenges, its
// Retry-After and the start of its body, each escaped.
func Answer(w io.Writer, r probe.Result) {
	if r.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", output.Untrusted(r.Error))
	}
	if r.Degraded != "" {
		fmt.Fprintf(w, "  degraded: %s\n", output.Untrusted(r.Degraded))
	}
	for _, a := range challenges(r) {
		fmt.Fprintf(w, "  %s: %s\n", a[0], output.Untrusted(a[1]))
	}
	if r.RetryAfter != nil && r.Outcome != classify.Pass {
		fmt.Fprintf(w, "  retry-after: %s\n", output.Seconds(*r.RetryAfter))
	}
	if r.BodyExcerpt != "" {
		fmt.Fprintf(w, "  body: %s\n", output.Untrusted(r.BodyExcerpt))
	}
}

// Challenge is the challenge the policy's why names: a 407's
// Proxy-Authenticate, else the WWW-Authenticate.
func Challenge(r probe.Result) string {
	if r.HTTPStatus == 407 && r.ProxyAuthenticate != "" {
		return output.Untrusted(r.ProxyAuthenticate)
	}
	return output.Untrusted(r.WWWAuthenticate)
}

// challenges are the WWW-Authenticate and Proxy-Authenticate a failing
// answer carried, as label and value.
func challenges(r probe.Result) [][2]string {
	var c [][2]string
	if r.WWWAuthenticate != "" {
		c = append(c, [2]string{"www-authenticate", r.WWWAuthenticate})
	}
	if r.ProxyAuthenticate != "" {
		c = append(c, [2]string{"proxy-authenticate", r.ProxyAuthenticate})
	}
	return c
}

// waterfall draws one bar per phase reached, offset where the phase began.
func waterfall(w io.Writer, t probe.Timings, label func(string) string, bar interface{ Sprint(...any) string }) {
	total := t.Of(probe.PhaseTotal)
	if total <= 0 {
		return
	}
	const width = 40
	offset := time.Duration(0)
	for _, ph := range probe.Phases {
		d, ok := t.Get(ph)
		if !ok {
			continue
		}
		start := offset
		if ph == probe.PhaseTotal {
			start = 0
		}
		a := int(float64(start) / float64(total) * width)
		n := int(math.Ceil(float64(d) / float64(total) * width))
		if n < 1 {
			n = 1
		}
		if a+n > width {
			a = max(0, width-n)
		}
		fmt.Fprintf(w, "%s%9s %s%s\n", label(string(ph)), output.FormatMS(d), strings.Repeat(" ", a), bar.Sprint(strings.Repeat("=", n)))
		if ph != probe.PhaseTotal {
			offset += d
		}
	}
}

// allFailed says some address was tried and none connected.
func allFailed(attempts []probe.DialAttempt) bool {
	for _, a := range attempts {
		if a.Error == "" {
			return false
		}
	}
	return len(attempts) > 0
}
