package probecmd

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/report"
)

// nagiosFlags are check_http's thresholds, for -o nagios: -w/-c response
// time and --cert-warn/--cert-crit days left on the server's certificate
// (check_http's -C).
type nagiosFlags struct {
	warn, crit         time.Duration
	certWarn, certCrit int
	fs                 *pflag.FlagSet
}

func (n *nagiosFlags) register(fs *pflag.FlagSet) {
	n.fs = fs
	fs.DurationVarP(&n.warn, "warning", "w", 0, "-o nagios: WARNING when the response takes longer (seconds, or a duration)")
	fs.DurationVarP(&n.crit, "critical", "c", 0, "-o nagios: CRITICAL when the response takes longer (seconds, or a duration)")
	fs.IntVar(&n.certWarn, "cert-warn", 0, "-o nagios: WARNING when the server certificate expires in fewer days (check_http -C)")
	fs.IntVar(&n.certCrit, "cert-crit", 0, "-o nagios: CRITICAL when the server certificate expires in fewer days")
}

// thresholds checks the flags against the output format and each other.
func (n *nagiosFlags) thresholds(output string) (report.NagiosThresholds, error) {
	th := report.NagiosThresholds{Warn: n.warn, Crit: n.crit, CertWarn: n.certWarn, CertCrit: n.certCrit}
	for _, name := range []string{"warning", "critical", "cert-warn", "cert-crit"} {
		f := n.fs.Lookup(name)
		if !f.Changed {
			continue
		}
		src := cli.FlagSource(n.fs, name)
		if output != "nagios" {
			return th, cli.UsageErrorf("%s: a Nagios threshold, for -o nagios only", src)
		}
		if v := f.Value.String(); v != "" && v[0] == '-' {
			return th, cli.UsageErrorf("%s %s: cannot be negative", src, v)
		}
	}
	if th.Warn > 0 && th.Crit > 0 && th.Crit < th.Warn {
		return th, cli.UsageErrorf("%s %s is below %s %s: the critical time must be the longer", cli.FlagSource(n.fs, "critical"), th.Crit, cli.FlagSource(n.fs, "warning"), th.Warn)
	}
	if th.CertWarn > 0 && th.CertCrit > 0 && th.CertCrit > th.CertWarn {
		return th, cli.UsageErrorf("%s %d is above %s %d: critical must be the fewer days", cli.FlagSource(n.fs, "cert-crit"), th.CertCrit, cli.FlagSource(n.fs, "cert-warn"), th.CertWarn)
	}
	return th, nil
}

// printNagios prints the run's monitoring-plugins report and returns its
// error: the worst state's code, or the signal's when interrupted.
func printNagios(f *cli.Factory, results []probe.Result, th report.NagiosThresholds, interrupted, sigCode int) error {
	text, code := report.Nagios(results, th)
	fmt.Fprint(f.Streams.Out, text)
	if interrupted > 0 {
		return cli.SilentExit(sigCode)
	}
	return &cli.ExitError{Code: code, Plugin: true}
}
