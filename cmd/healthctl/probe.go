package main

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/proc"
)

// probeOptions is what `healthctl probe` runs with, filled by its RunE.
type probeOptions struct {
	urls   []string
	flags  probeFlags
	policy policyFlags
}

func (a *app) newProbeCmd() *cobra.Command {
	opts := &probeOptions{}
	cmd := &cobra.Command{
		Use:   "probe URL...",
		Short: "Probe URLs once and say why they are not healthy",
		Long: `Probe each URL once on a fresh connection and classify the result into one of
six outcomes with a precise reason, a timing waterfall, the certificate chain and
the reconciler's decision. Several URLs are probed concurrently and printed in
argument order; the exit code is that of the first URL that did not pass.

Exit codes: 0 pass, 1 unreachable, 2 usage error, 3 tls, 4 timeout, 5 refused,
6 dns, 70 internal error, 130/143 interrupted (the finished results are still
printed, and "INTERRUPTED URL - TIME" for each probe cut short; in JSON an object
with "interrupted": true and no outcome). With -o nagios: one
monitoring-plugins line per URL and 0 OK, 2 CRITICAL, 3 UNKNOWN (usage error).`,
		Example: `  healthctl probe https://app.example.com/health
  healthctl probe -o json --expect-json status=ready http://127.0.0.1:8080/ready
  healthctl probe --age 10m --failure-threshold 3 http://127.0.0.1:8080/health`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("probe: missing URL (usage: healthctl probe URL...)")
			}
			opts.urls = args
			return a.probeRun(cmd.Context(), opts)
		},
	}
	opts.flags.register(cmd.Flags())
	opts.policy.register(cmd.Flags(), true)
	return cmd
}

func (a *app) probeRun(ctx context.Context, opts *probeOptions) error {
	now := time.Now()
	settings, err := opts.policy.settings()
	if err != nil {
		return err
	}
	age, known, warning, err := opts.policy.ageAt(now)
	if err != nil {
		return err
	}
	if warning != "" {
		fmt.Fprintf(a.streams.Err, "healthctl: warning: %s\n", warning)
	}
	tmpl, err := opts.flags.build(a.getenv)
	if err != nil {
		return err
	}
	all := make([]*probe.Options, len(opts.urls))
	for i, raw := range opts.urls {
		if all[i], err = tmpl.forURL(raw); err != nil {
			return err
		}
	}

	// Signals are not awaited here (signalsCaught): catching them needs a
	// thread the runtime starts at its own pace, 0.1-3 ms on a loaded
	// machine, which is most of a probe. A signal in that first instant
	// ends healthctl as the default action does (exit 130/143, no summary,
	// and there is no finished result to report yet).
	results := make([]probe.Result, len(all))
	if len(all) == 1 {
		// One URL: no goroutine to start (it costs start-up time).
		results[0] = a.probe(ctx, all[0])
	} else {
		var wg sync.WaitGroup
		for i, o := range all {
			wg.Go(func() {
				defer crash.Recover()
				results[i] = a.probe(ctx, o)
			})
		}
		wg.Wait()
	}

	// A signal (SIGINT, SIGTERM) cuts the unfinished probes short; the
	// finished ones are still reported, the others as interrupted, and the
	// run exits 130/143.
	interrupted := 0
	for _, r := range results {
		if r.Canceled {
			interrupted++
		}
	}
	sigCode := a.signalCode()
	if interrupted > 0 {
		defer fmt.Fprintf(a.streams.Err, "healthctl: interrupted (%s): %d of %d probe%s cut short\n",
			signalName(a), interrupted, len(results), waitPlural(len(results)))
	}

	code := ExitPass
	if a.global.output == "nagios" {
		for _, r := range results {
			if r.Canceled {
				fmt.Fprintf(a.streams.Out, "HEALTHCTL UNKNOWN: interrupted %s\n", r.URL)
				continue
			}
			fmt.Fprintln(a.streams.Out, output.NagiosLine(r))
			if r.Outcome != classify.Pass {
				code = NagiosCritical
			}
		}
		if interrupted > 0 {
			return silentExit(sigCode)
		}
		return &exitError{code: code, plugin: true}
	}
	for _, r := range results {
		if r.Canceled {
			a.printInterrupted(r, sigCode)
			continue
		}
		d, _ := policy.Decide(policy.Input{
			Outcome:  r.Outcome,
			Reason:   r.Reason,
			History:  policy.ForProbe(age, known, r.Started),
			Settings: settings,
			Now:      r.Started,
		})
		rc := ExitCode(r.Outcome)
		if len(results) == 1 || code == ExitPass {
			code = rc
		}
		a.printResult(r, &d, rc)
	}
	if interrupted > 0 {
		return silentExit(sigCode)
	}
	return silentExit(code)
}

// printInterrupted renders a probe a signal cut short.
func (a *app) printInterrupted(r probe.Result, code int) {
	s := a.streams
	switch {
	case a.json():
		_ = output.JSONLine(s.Out, output.NewInterruptedJSON(r, code))
	case a.global.quiet:
		fmt.Fprintln(s.Err, output.InterruptedLine(r, s.ErrColor))
	default:
		fmt.Fprintln(s.Out, output.InterruptedLine(r, s.OutColor))
	}
}

// signalName names the signal that stopped this run, for messages.
func signalName(a *app) string {
	if s, ok := a.signal.Load().(syscall.Signal); ok {
		return proc.SignalName(s)
	}
	return "cancelled"
}

// printResult renders one probe result in the chosen format.
func (a *app) printResult(r probe.Result, d *policy.Decision, code int) {
	s := a.streams
	if a.json() {
		_ = output.JSONLine(s.Out, output.NewResultJSON(r, d, code))
		return
	}
	if a.global.quiet {
		if r.Outcome != classify.Pass {
			fmt.Fprintln(s.Err, output.FirstLine(r, s.ErrColor))
		}
		return
	}
	fmt.Fprintln(s.Out, output.FirstLine(r, s.OutColor))
	if a.details() {
		output.Details(s.Out, r, d, s.OutColor)
	} else if r.Error != "" {
		fmt.Fprintf(s.Out, "  error: %s\n", r.Error)
	}
}
