package probecmd

import (
	"fmt"
	"io"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/report"
)

// runReport is one probe run's results, in argument order, for every
// format: a document each (text: a first line each, and the details), or
// the one monitoring-plugins report.
type runReport struct {
	results   []probe.Result
	decisions []*policy.Decision // nil for a probe cut short
	codes     []int              // each result's exit code (--exit-1 decided)
	// interruptedCode is the exit code a probe cut short shows.
	interruptedCode int
	// signalled is the signal's exit code when a signal cut probes short.
	signalled  int
	thresholds report.NagiosThresholds
	fold       func(int) int
}

// Docs are one object per URL.
func (rep *runReport) Docs(render.Writer) render.Docs {
	return render.Docs{N: len(rep.results), At: func(i int) (any, bool) {
		r := rep.results[i]
		if r.Canceled {
			return report.NewInterruptedJSON(r, rep.interruptedCode), true
		}
		j := report.NewResultJSON(r, rep.decisions[i], rep.codes[i])
		// --all-addresses: each address's code, as the run's, is the
		// one --exit-1 decides.
		j.FoldAddresses(rep.fold)
		return j, true
	}}
}

// Text is each result's first line (on stderr with -q, failures only)
// and its details on a terminal or with -v.
func (rep *runReport) Text(w render.Writer) error {
	for i, r := range rep.results {
		switch {
		case r.Canceled && w.Quiet:
			fmt.Fprintln(w.Err, report.InterruptedLine(r, w.ErrColor))
		case r.Canceled:
			fmt.Fprintln(w.Out, report.InterruptedLine(r, w.OutColor))
		case w.Quiet:
			if r.Outcome != classify.Pass {
				fmt.Fprintln(w.Err, report.FirstLine(r, w.ErrColor))
			}
		case len(r.Addresses) > 0:
			textAddresses(w, r, rep.decisions[i])
		default:
			io.WriteString(w.Out, report.FirstLine(r, w.OutColor)+"\n")
			if w.Details() {
				report.Details(w.Out, r, rep.decisions[i], w.OutColor)
			} else {
				report.Answer(w.Out, r)
			}
		}
		if err := stdoutFailed(w); err != nil {
			return err // stdout is gone: no more lines
		}
	}
	return nil
}

// stdoutFailed is the first failed write to stdout, if any.
func stdoutFailed(w render.Writer) error {
	if c, ok := w.Out.(*output.CheckedWriter); ok {
		return c.Err()
	}
	return nil
}

// Plugin is the run as check_http reports it: the worst state's line and
// code, or the signal's code when interrupted.
func (rep *runReport) Plugin() (string, error) {
	text, code := report.Nagios(rep.results, rep.thresholds)
	if rep.signalled != 0 {
		return text, cli.SilentExit(rep.signalled)
	}
	return text, &cli.ExitError{Code: code, Plugin: true}
}

// textAddresses renders --all-addresses: one first line per address
// ("… URL via ADDR …"), its error or details, then the summary and the
// decision on the worst.
func textAddresses(w render.Writer, r probe.Result, d *policy.Decision) {
	for _, a := range r.Addresses {
		shown := a
		shown.URL = a.URL + " via " + a.Address
		fmt.Fprintln(w.Out, report.FirstLine(shown, w.OutColor))
		if w.Details() {
			report.Details(w.Out, a, nil, w.OutColor)
		} else if a.Error != "" {
			// The server's own words can reach this text (a TLS alert,
			// a protocol error): escaped like every server-sent string.
			fmt.Fprintf(w.Out, "  error: %s\n", output.Untrusted(a.Error))
		}
	}
	sum := output.Untrusted(r.Error)
	if r.Outcome == classify.Pass {
		sum = fmt.Sprintf("all %d addresses pass", len(r.Addresses))
	}
	fmt.Fprintf(w.Out, "SUMMARY %s %s: %s\n", r.Outcome, output.DisplayURL(r.URL), sum)
	if w.Details() && d != nil {
		fmt.Fprintf(w.Out, "  decision   %s: %s\n", d.Action, d.Why)
	}
}
