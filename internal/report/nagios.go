package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/probe"
)

// nagiosNames are the states by exit code (internal/exitcode's Nagios*).
var nagiosNames = [...]string{"OK", "WARNING", "CRITICAL", "UNKNOWN"}

// NagiosThresholds are check_http's -w/-c (response time) and -C
// (certificate days); zero is unset.
type NagiosThresholds struct {
	Warn, Crit         time.Duration
	CertWarn, CertCrit int
}

// nagiosRank orders states from best to worst as monitoring-plugins'
// max_state_alt does: OK < UNKNOWN < WARNING < CRITICAL.
func nagiosRank(state int) int {
	return [...]int{0, 2, 3, 1}[state]
}

// NagiosState is one result's state and, when thresholds made it worse
// than its outcome, why ("time 0.612s > 0.5s", "certificate expires in 9 days").
func NagiosState(r probe.Result, th NagiosThresholds) (int, string) {
	switch {
	case r.Canceled, r.Outcome == classify.Unknown:
		return exitcode.NagiosUnknown, ""
	case r.Outcome != classify.Pass:
		return exitcode.NagiosCritical, ""
	}
	total := r.Timings[probe.PhaseTotal]
	days, hasCert := leafDays(r)
	switch {
	case th.Crit > 0 && total > th.Crit:
		return exitcode.NagiosCritical, fmt.Sprintf("time %.3fs > critical %s", total.Seconds(), secs(th.Crit))
	case hasCert && th.CertCrit > 0 && days < th.CertCrit:
		return exitcode.NagiosCritical, fmt.Sprintf("certificate expires in %d days < critical %d", days, th.CertCrit)
	case th.Warn > 0 && total > th.Warn:
		return exitcode.NagiosWarning, fmt.Sprintf("time %.3fs > warning %s", total.Seconds(), secs(th.Warn))
	case hasCert && th.CertWarn > 0 && days < th.CertWarn:
		return exitcode.NagiosWarning, fmt.Sprintf("certificate expires in %d days < warning %d", days, th.CertWarn)
	}
	return exitcode.NagiosOK, ""
}

// leafDays is the server certificate's days left, when there is one.
func leafDays(r probe.Result) (int, bool) {
	if r.TLS == nil || len(r.TLS.Chain) == 0 {
		return 0, false
	}
	return r.TLS.Chain[0].DaysLeft, true
}

// secs is a threshold as typed: 0.5s, 2s, 0.000001s.
func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
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
		switch worst {
		case exitcode.NagiosOK:
			fmt.Fprintf(&b, "%d of %d ok", n, len(results))
		case exitcode.NagiosCritical:
			fmt.Fprintf(&b, "%d of %d failed: %s", n, len(results), lines[first])
		default:
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
	if why != "" {
		rest += " (" + why + ")"
	}
	return nagiosEscape(rest)
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
	limit := func(d time.Duration) string {
		if d <= 0 {
			return ""
		}
		return fmt.Sprintf("%.6f", d.Seconds())
	}
	out := []string{fmt.Sprintf("time%s=%.6fs;%s;%s;0", suffix, r.Timings[probe.PhaseTotal].Seconds(), limit(th.Warn), limit(th.Crit))}
	for _, ph := range []probe.Phase{probe.PhaseDNS, probe.PhaseConnect, probe.PhaseTLS, probe.PhaseTTFB} {
		if d, ok := r.Timings[ph]; ok {
			out = append(out, fmt.Sprintf("%s%s=%.6fs;;;0", ph, suffix, d.Seconds()))
		}
	}
	if r.HTTPStatus != 0 {
		out = append(out, fmt.Sprintf("status%s=%d", suffix, r.HTTPStatus))
	}
	if days, ok := leafDays(r); ok {
		days := fmt.Sprintf("cert_days%s=%d", suffix, days)
		if th.CertWarn > 0 || th.CertCrit > 0 {
			days += ";" + intOrEmpty(th.CertWarn) + ";" + intOrEmpty(th.CertCrit)
		}
		out = append(out, days)
	}
	return out
}

func intOrEmpty(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprint(n)
}
