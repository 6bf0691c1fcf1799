package probecmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/report"
	"github.com/healthctl/healthctl/internal/source"
)

// nagiosFlags are check_http's options, for -o nagios: -w/-c response-time
// ranges in the monitoring-plugins guidelines' syntax, --cert-warn/--cert-crit
// days left on the server's certificate (check_http's -C), and -t/--timeout,
// the plugins' standard name for --max-time.
type nagiosFlags struct {
	warn, crit         string
	certWarn, certCrit int
	timeout            secondsValue
	fs                 *pflag.FlagSet
}

func (n *nagiosFlags) register(fs *pflag.FlagSet) {
	n.fs = fs
	fs.StringVarP(&n.warn, "warning", "w", "", "-o nagios: WARNING range for the response time in seconds (10: above 10s; 1:2, @1:2, ~:5, 10: as the plugin guidelines say; 500ms works too)")
	fs.StringVarP(&n.crit, "critical", "c", "", "-o nagios: CRITICAL range for the response time in seconds (as --warning)")
	fs.IntVar(&n.certWarn, "cert-warn", 0, "-o nagios: WARNING when the server certificate expires in fewer days (check_http -C)")
	fs.IntVar(&n.certCrit, "cert-crit", 0, "-o nagios: CRITICAL when the server certificate expires in fewer days")
	fs.VarP(&n.timeout, "timeout", "t", "-o nagios: the check's whole budget, as the plugins' -t: --max-time and the connect and read windows unless given (seconds, or a duration; default 10)")
}

// secondsValue is a duration given as plugins give it, in seconds ("10",
// "0.5"), or as a Go duration ("10s").
type secondsValue struct{ d time.Duration }

func (v *secondsValue) String() string {
	if v.d == 0 {
		return ""
	}
	return v.d.String()
}
func (v *secondsValue) Type() string { return "seconds" }
func (v *secondsValue) Set(s string) error {
	d, err := seconds(s)
	if err != nil {
		return err
	}
	if d <= 0 {
		return fmt.Errorf("must be positive, got %s", s)
	}
	v.d = d
	return nil
}

// seconds reads a plain number as seconds, anything else as a duration.
func seconds(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "eEnNiI") {
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want seconds (10, 0.5) or a duration (500ms), got %q", s)
	}
	return d, nil
}

// applyTimeout makes -t/--timeout the probe's --max-time, before the probe
// options are built. It is for -o nagios only: elsewhere --timeout would
// read as wait-healthy's overall ceiling, which probe does not have. For
// the same reason a top-level HEALTHCTL_TIMEOUT or config key timeout:
// (wait-healthy's) never reaches probe; HEALTHCTL_PROBE_TIMEOUT and the
// config's probe.timeout do.
//
// With -o nagios the budget is the check's whole time, as the plugins
// have it: -t (else --max-time, else check_http's 10 s) is also the
// connect and read window unless --connect-timeout or --read-timeout was
// given (flag, variable or config), so the probe's 2 s windows never turn
// a slow answer that -w/-c should grade into a CRITICAL timeout.
func (n *nagiosFlags) applyTimeout(plugin render.Budgeted) error {
	if err := n.applyT(plugin != nil); err != nil {
		return err
	}
	if plugin == nil {
		return nil
	}
	budget, src := plugin.Budget(), fmt.Sprintf("-o nagios's default budget (check_http's -t %g)", plugin.Budget().Seconds())
	if mt := n.fs.Lookup("max-time"); mt != nil {
		if mt.Changed {
			d, err := time.ParseDuration(mt.Value.String())
			if err != nil || d <= 0 {
				return nil // the probe options' own check names it
			}
			budget, src = d, cli.FlagSource(n.fs, "max-time")
		} else if err := n.setFrom("max-time", budget, src); err != nil {
			return err
		}
	}
	for _, w := range []string{"connect-timeout", "read-timeout"} {
		if f := n.fs.Lookup(w); f != nil && !f.Changed {
			if err := n.setFrom(w, budget, src); err != nil {
				return err
			}
		}
	}
	return nil
}

// setFrom sets flag to d, and names src as where it came from in errors.
func (n *nagiosFlags) setFrom(flag string, d time.Duration, src string) error {
	if err := n.fs.Set(flag, d.String()); err != nil {
		return cli.UsageErrorf("%s %s: %v", src, d, err)
	}
	f := n.fs.Lookup(flag)
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[source.Annotation] = []string{src}
	return nil
}

// applyT makes -t/--timeout the probe's --max-time.
func (n *nagiosFlags) applyT(plugin bool) error {
	f := n.fs.Lookup("timeout")
	if f == nil || !f.Changed {
		return nil
	}
	src := cli.FlagSource(n.fs, "timeout")
	if src == "HEALTHCTL_TIMEOUT" || strings.HasSuffix(src, ": timeout") {
		return nil
	}
	if !plugin {
		return cli.UsageErrorf("%s: the plugins' name for --max-time, for -o nagios only (use --max-time)", src)
	}
	if mt := n.fs.Lookup("max-time"); mt != nil && mt.Changed {
		mtSrc := cli.FlagSource(n.fs, "max-time")
		fromLine := func(s string) bool { return strings.HasPrefix(s, "--") }
		switch {
		case fromLine(mtSrc) && fromLine(src):
			return cli.UsageErrorf("%s and %s: the same setting twice (-t is the plugins' name for --max-time): give one", src, mtSrc)
		case fromLine(mtSrc):
			// The command line beats the configuration.
			return nil
		}
	}
	// Errors about the probe's time limit name where it came from.
	return n.setFrom("max-time", n.timeout.d, src)
}

// thresholds checks the flags against the output format (plugin: one
// with thresholds) and each other.
func (n *nagiosFlags) thresholds(plugin bool) (report.NagiosThresholds, error) {
	th := report.NagiosThresholds{CertWarn: n.certWarn, CertCrit: n.certCrit}
	if f := n.fs.Lookup("expect-status"); f != nil {
		th.ExpectStatus = f.Changed
	}
	for _, name := range []string{"warning", "critical", "cert-warn", "cert-crit"} {
		f := n.fs.Lookup(name)
		if !f.Changed {
			continue
		}
		src := cli.FlagSource(n.fs, name)
		if !plugin {
			return th, cli.UsageErrorf("%s: a Nagios threshold, for -o nagios only", src)
		}
		if v := f.Value.String(); (name == "cert-warn" || name == "cert-crit") && v != "" && v[0] == '-' {
			return th, cli.UsageErrorf("%s %s: cannot be negative", src, v)
		}
	}
	timeNumber := func(s string) (float64, error) {
		d, err := seconds(s)
		return d.Seconds(), err
	}
	for _, r := range []struct {
		name string
		text string
		dst  *report.NagiosRange
	}{{"warning", n.warn, &th.Warn}, {"critical", n.crit, &th.Crit}} {
		if r.text == "" {
			continue
		}
		rg, err := report.ParseNagiosRange(r.text, timeNumber)
		if err != nil {
			return th, cli.UsageErrorf("%s %v", cli.FlagSource(n.fs, r.name), err)
		}
		*r.dst = rg
	}
	// Plain upper bounds (check_http's -w 2 -c 5) must nest: a critical
	// time below the warning one would never warn.
	if plainUpper(th.Warn) && plainUpper(th.Crit) && th.Crit.End < th.Warn.End {
		return th, cli.UsageErrorf("%s %s is below %s %s: the critical time must be the longer",
			cli.FlagSource(n.fs, "critical"), secs(th.Crit.End), cli.FlagSource(n.fs, "warning"), secs(th.Warn.End))
	}
	if th.CertWarn > 0 && th.CertCrit > 0 && th.CertCrit > th.CertWarn {
		return th, cli.UsageErrorf("%s %d is above %s %d: critical must be the fewer days", cli.FlagSource(n.fs, "cert-crit"), th.CertCrit, cli.FlagSource(n.fs, "cert-warn"), th.CertWarn)
	}
	return th, nil
}

func plainUpper(r report.NagiosRange) bool {
	return r.Set() && !r.Inside && r.Start == 0 && !strings.Contains(r.Text, ":")
}

func secs(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) + "s" }
