package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/words"
)

// nagiosNames are the states by exit code (internal/exitcode's Nagios*).
var nagiosNames = [...]string{"OK", "WARNING", "CRITICAL", "UNKNOWN"}

// NagiosThresholds are check_http's -w/-c (response time, in seconds, as
// ranges) and -C (certificate days); an unset range or a zero day count is
// no threshold.
type NagiosThresholds struct {
	Warn, Crit         NagiosRange
	CertWarn, CertCrit int
	// ExpectStatus: --expect-status was given (check_http's -e), so any
	// status that fails it is CRITICAL, a 3xx and a 4xx too.
	ExpectStatus bool
}

// NagiosRange is a threshold range in the monitoring-plugins guidelines'
// syntax, [@]start:end: "10" alerts outside 0..10, "10:" below 10, "~:10"
// above 10, "10:20" outside 10..20, "@10:20" inside 10..20 (the ends are
// inside the range).
type NagiosRange struct {
	Start, End float64
	// Inside is the @ form: alert when the value is inside the range.
	Inside bool
	// Text is the range as the perfdata carries it ("" when unset).
	Text string
}

// Set reports whether the range was given.
func (r NagiosRange) Set() bool { return r.Text != "" }

// Alert reports whether v raises the alert of the range.
func (r NagiosRange) Alert(v float64) bool {
	if !r.Set() {
		return false
	}
	in := v >= r.Start && v <= r.End
	return in == r.Inside
}

// upper reports whether the range is the plain "N" form (alert above N),
// whose why reads "> N".
func (r NagiosRange) upper() bool { return !r.Inside && r.Start == 0 && !math.IsInf(r.End, 1) }

// ParseNagiosRange parses a range in the guidelines' syntax. Each end is
// a number, or (when number is given) whatever number accepts — for
// response times a duration such as 500ms. "~" is minus infinity; an empty
// end is plus infinity.
func ParseNagiosRange(s string, number func(string) (float64, error)) (NagiosRange, error) {
	if number == nil {
		number = func(t string) (float64, error) { return strconv.ParseFloat(t, 64) }
	}
	r := NagiosRange{Start: 0, End: math.Inf(1)}
	body := s
	if strings.HasPrefix(body, "@") {
		r.Inside, body = true, body[1:]
	}
	if body == "" {
		return r, fmt.Errorf("%q: empty range (want [@]start:end, e.g. 10, 10:, ~:10, 10:20, @10:20)", s)
	}
	start, end, colon := strings.Cut(body, ":")
	if !colon {
		start, end = "", body
	}
	if colon {
		switch start {
		case "~":
			r.Start = math.Inf(-1)
		case "":
			// ":10" is 0:10, as the plugins' own parser reads it.
		default:
			v, err := number(start)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return r, fmt.Errorf("%q: start %q is not a number", s, start)
			}
			r.Start = v
		}
	}
	if end != "" {
		v, err := number(end)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return r, fmt.Errorf("%q: end %q is not a number", s, end)
		}
		r.End = v
	} else if !colon {
		return r, fmt.Errorf("%q: empty range", s)
	}
	if r.Start > r.End {
		return r, fmt.Errorf("%q: the start is above the end", s)
	}
	r.Text = r.format()
	return r, nil
}

// format writes the range back in the guidelines' syntax, ends as plain
// numbers (a duration given as 500ms becomes 0.5).
func (r NagiosRange) format() string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	var b strings.Builder
	if r.Inside {
		b.WriteByte('@')
	}
	switch {
	case math.IsInf(r.Start, -1):
		b.WriteString("~:")
	case r.Start != 0 || math.IsInf(r.End, 1):
		b.WriteString(num(r.Start) + ":")
	}
	if !math.IsInf(r.End, 1) {
		b.WriteString(num(r.End))
	}
	return b.String()
}

// nagiosRank orders states from best to worst as monitoring-plugins'
// max_state_alt does: OK < UNKNOWN < WARNING < CRITICAL.
func nagiosRank(state int) int {
	return [...]int{0, 2, 3, 1}[state]
}

// NagiosState is one result's state and, when thresholds made it worse
// than its outcome, why ("time 0.612s > 0.5s", "certificate expires in 9 days").
// Answers are graded as check_http and check_curl grade them (both run on
// the same loopback servers: TestNagiosAgainstPlugins): an unfollowed
// redirect (a 3xx that failed the default 2xx) is OK, its status shown; a
// 4xx is WARNING (the server answered, the client side is wrong); a 5xx
// and every transport failure (refused, DNS, TLS, timeout) are CRITICAL.
// With --expect-status given (check_http's -e) any status that fails it is
// CRITICAL. An answer's time and certificate can only make its state
// worse: a 404 past -c is CRITICAL, a redirect past -w WARNING.
func NagiosState(r probe.Result, th NagiosThresholds) (int, string) {
	state := exitcode.NagiosOK
	switch {
	case r.Canceled, r.Outcome == classify.Unknown:
		return exitcode.NagiosUnknown, ""
	case r.Outcome == classify.Pass && r.Reason == classify.Degraded:
		// The service answers and says it is degraded: a warning.
		state = exitcode.NagiosWarning
	case r.Outcome == classify.Pass:
	case r.Reason != classify.HTTPStatus && r.Reason != classify.Redirect:
		// Transport failures, and conditions on the body or headers.
		return exitcode.NagiosCritical, ""
	case th.ExpectStatus:
		return exitcode.NagiosCritical, ""
	case r.HTTPStatus >= 300 && r.HTTPStatus <= 399:
		// check_http's default --onredirect=ok.
	case r.HTTPStatus >= 400 && r.HTTPStatus <= 499:
		state = exitcode.NagiosWarning
	default:
		return exitcode.NagiosCritical, ""
	}
	total := r.Timings.Of(probe.PhaseTotal).Seconds()
	days, hasCert := leafDays(r)
	switch {
	case th.Crit.Alert(total):
		return exitcode.NagiosCritical, timeWhy(total, "critical", th.Crit)
	case hasCert && th.CertCrit > 0 && days < th.CertCrit:
		return exitcode.NagiosCritical, fmt.Sprintf("certificate expires in %d days < critical %d", days, th.CertCrit)
	case state == exitcode.NagiosWarning:
		return state, ""
	case th.Warn.Alert(total):
		return exitcode.NagiosWarning, timeWhy(total, "warning", th.Warn)
	case hasCert && th.CertWarn > 0 && days < th.CertWarn:
		return exitcode.NagiosWarning, fmt.Sprintf("certificate expires in %d days < warning %d", days, th.CertWarn)
	}
	return state, ""
}

// timeWhy says how the response time broke a range: "> warning 0.5s" for
// the plain form, else in or out of the range as written.
func timeWhy(total float64, level string, r NagiosRange) string {
	switch {
	case r.upper():
		return fmt.Sprintf("time %.3fs > %s %ss", total, level, r.Text)
	case r.Inside:
		return fmt.Sprintf("time %.3fs inside %s range %s", total, level, r.Text)
	}
	return fmt.Sprintf("time %.3fs outside %s range %s", total, level, r.Text)
}

// leafDays is the server certificate's days left, when there is one.
func leafDays(r probe.Result) (int, bool) {
	if r.TLS == nil || len(r.TLS.Chain) == 0 {
		return 0, false
	}
	return r.TLS.Chain[0].DaysLeft, true
}

// Nagios renders the results of one run the monitoring-plugins way and
// returns the text and the exit code (the worst state): one status line
// "HEALTHCTL STATE - ..." with every URL's performance data after a single
// "|", then (several URLs) one line per URL. Labels are unique per URL
// (time_1, time_2: the argument's position); a "|" in a URL is written %7C
// so the output splits where Nagios splits it.
func Nagios(results []probe.Result, th NagiosThresholds) (string, int) {
	states := make([]int, len(results))
	lines := make([]string, len(results))
	var perf []string
	worst := exitcode.NagiosOK
	for i, r := range results {
		st, why := NagiosState(r, th)
		states[i] = st
		if nagiosRank(st) > nagiosRank(worst) {
			worst = st
		}
		lines[i] = nagiosText(r, why)
		suffix := ""
		if len(results) > 1 {
			suffix = fmt.Sprintf("_%d", i+1)
		}
		perf = append(perf, nagiosPerf(r, th, suffix)...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HEALTHCTL %s - ", nagiosNames[worst])
	if len(results) == 1 {
		b.WriteString(lines[0])
	} else {
		n, first := 0, -1
		for i, st := range states {
			if st == worst {
				n++
				if first < 0 {
					first = i
				}
			}
		}
		// Counted by the worst state's name, never "failed": a 404 beside
		// a refused URL is a WARNING that failed too, and "1 of 3 failed"
		// above its own WARNING line would contradict it.
		if worst == exitcode.NagiosOK {
			fmt.Fprintf(&b, "%d of %d ok", n, len(results))
		} else {
			fmt.Fprintf(&b, "%d of %d %s: %s", n, len(results), strings.ToLower(nagiosNames[worst]), lines[first])
		}
	}
	if len(perf) > 0 {
		b.WriteString(" | " + strings.Join(perf, " "))
	}
	b.WriteByte('\n')
	if len(results) > 1 {
		for i, l := range lines {
			fmt.Fprintf(&b, "%s - %s\n", nagiosNames[states[i]], l)
		}
	}
	return b.String(), worst
}

// NagiosUnknownLine is the line a run that could not check anything (a
// usage error) prints on stdout: Nagios shows stdout, not stderr.
func NagiosUnknownLine(msg string) string {
	return "HEALTHCTL UNKNOWN - " + nagiosEscape(msg) + "\n"
}

// nagiosText is one result's text: its first line without PASS/FAIL (the
// state says it), and why thresholds changed its state.
func nagiosText(r probe.Result, why string) string {
	if r.Canceled {
		return nagiosEscape("interrupted " + r.URL)
	}
	_, rest, _ := strings.Cut(FirstLine(r, false), " ")
	if r.Outcome != classify.Pass && r.HTTPStatus >= 300 && r.HTTPStatus <= 399 &&
		(r.Reason == classify.Redirect || r.Reason == classify.HTTPStatus) {
		// A 3xx not followed: OK as check_http's --onredirect=ok has it
		// (or CRITICAL under --expect-status), never "OK - unreachable".
		rest = redirectText(r)
	}
	if n := len(r.Hops); n > 0 {
		rest += fmt.Sprintf(" (followed %s)", words.Plural(n, "redirect"))
	}
	if why != "" {
		rest += " (" + why + ")"
	}
	return nagiosEscape(rest)
}

// redirectText says a 3xx answer that was not followed: where it pointed
// (or that it pointed nowhere), then the URL and time as the first line
// has them: "302 redirect to https://a/login not followed: http://a/ 1.2ms".
func redirectText(r probe.Result) string {
	where := " without a Location, not followed"
	if d := r.Redirect; d != nil && d.Location != "" {
		loc := output.Untrusted(d.Location)
		if !d.Invalid {
			loc = output.Untrusted(output.DisplayURL(d.Location))
		}
		where = " redirect to " + loc + " not followed"
		if d.Invalid {
			where = " redirect to an invalid Location (" + loc + ") not followed"
		}
	}
	url := output.Untrusted(output.DisplayURL(r.URL))
	return strconv.Itoa(r.HTTPStatus) + where + ": " + url + " " + output.FormatMS(r.Timings.Of(probe.PhaseTotal))
}

// nagiosEscape keeps "|" (the perfdata separator) and line breaks out of
// status text.
func nagiosEscape(s string) string {
	return strings.NewReplacer("|", "%7C", "\n", " ", "\r", " ").Replace(s)
}

// nagiosPerf is one result's performance data,
// label=value[UOM];[warn];[crit];[min];[max].
func nagiosPerf(r probe.Result, th NagiosThresholds, suffix string) []string {
	if r.Canceled {
		return nil
	}
	out := []string{fmt.Sprintf("time%s=%.6fs;%s;%s;0", suffix, r.Timings.Of(probe.PhaseTotal).Seconds(), th.Warn.Text, th.Crit.Text)}
	for _, ph := range []probe.Phase{probe.PhaseDNS, probe.PhaseConnect, probe.PhaseTLS, probe.PhaseTTFB} {
		if d, ok := r.Timings.Get(ph); ok {
			out = append(out, fmt.Sprintf("%s%s=%.6fs;;;0", ph, suffix, d.Seconds()))
		}
	}
	if r.HTTPStatus != 0 {
		out = append(out, fmt.Sprintf("status%s=%d", suffix, r.HTTPStatus))
	}
	if days, ok := leafDays(r); ok {
		// The check alerts below the day counts: in range syntax the OK
		// range is "N:" (N or more), so perfdata writers (PNP4Nagios,
		// nagflux, Icinga) read 10 days against 30: as the check did.
		days := fmt.Sprintf("cert_days%s=%d", suffix, days)
		if th.CertWarn > 0 || th.CertCrit > 0 {
			days += ";" + atLeast(th.CertWarn) + ";" + atLeast(th.CertCrit)
		}
		out = append(out, days)
	}
	return out
}

// atLeast is the range "n:" (alert below n), "" for no threshold.
func atLeast(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n) + ":"
}
