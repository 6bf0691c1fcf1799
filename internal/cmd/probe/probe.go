// Package probecmd is `healthctl probe`: its options, its run function and
// how it prints results (text, JSON, Nagios).
package probecmd

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/limits"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/report"

	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/words"
)

// Options is what `healthctl probe` runs with, filled by its RunE.
type Options struct {
	URLs   []string
	Flags  cli.ProbeFlags
	Policy cli.PolicyFlags
	nagios nagiosFlags
}

// NewCmd builds the command; runF replaces Run in flag-parsing tests (nil:
// the real run).
func NewCmd(f *cli.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "probe URL...",
		Short: "Probe URLs once and say why they are not healthy",
		Long: `Probe each URL once on a fresh connection and classify the result into one of
seven outcomes with a precise reason, a timing waterfall, the certificate chain and
the reconciler's decision. Several URLs are probed concurrently (at most watch's
default --concurrency at once) and printed in argument order; the exit code is that of the first URL that did not pass.

Exit codes: 0 pass, 1 unreachable, 2 usage error, 3 tls, 4 timeout, 5 refused,
6 dns, 9 unknown, 70 internal error, 74 the output could not be written,
130/131/143 interrupted (the finished results are still
printed, and "INTERRUPTED URL - TIME" for each probe cut short; in JSON an object
with "interrupted": true and no outcome). With -o nagios: one
monitoring-plugins status line (the worst state; several URLs add a line each),
-w/-c response-time ranges (2, 10:, 1:2, @1:2, ~:5), --cert-warn/--cert-crit days,
-t/--timeout the check's whole budget (--max-time and, unless given, the connect
and read windows; default 10s), check_http's grading (an unfollowed 3xx OK, 4xx
WARNING, 5xx CRITICAL; with --expect-status any miss CRITICAL), and 0 OK, 1 WARNING,
2 CRITICAL, 3 UNKNOWN (also a usage error, with its line on stdout).`,
		Example: `  healthctl probe https://app.example.com/health
  healthctl probe -o json --expect-json status=ready http://127.0.0.1:8080/ready
  healthctl probe --age 10m --failure-threshold 3 http://127.0.0.1:8080/health`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.UsageErrorf("probe: missing URL (usage: healthctl probe URL...)")
			}
			opts.URLs = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	opts.Flags.Register(cmd.Flags())
	opts.Policy.Register(cmd.Flags(), true)
	opts.nagios.register(cmd.Flags())
	return cmd
}

// signalGrace is how long a probe of one URL runs before it catches
// signals (see Run).
const signalGrace = 10 * time.Millisecond

// Run probes every URL, concurrently, and prints the results in argument
// order; its error carries the exit code.
func Run(ctx context.Context, f *cli.Factory, opts *Options) error {
	now := f.Clock()
	settings, err := opts.Policy.Settings()
	if err != nil {
		return err
	}
	age, known, warning, err := opts.Policy.AgeAt(now)
	if err != nil {
		return err
	}
	if warning != "" {
		fmt.Fprintf(f.Streams.Err, "healthctl: warning: %s\n", warning)
	}
	// A format with a whole-check budget (-o nagios) owns -t and the
	// thresholds; elsewhere they are refused.
	plugin, _ := f.Format.(render.Budgeted)
	if err := opts.nagios.applyTimeout(plugin); err != nil {
		return err
	}
	opts.Flags.Stdin = f.Streams.In
	tmpl, err := opts.Flags.Build(f.Getenv)
	if err != nil {
		return err
	}
	thresholds, err := opts.nagios.thresholds(plugin != nil)
	if err != nil {
		return err
	}
	all := make([]*scheme.Options, len(opts.URLs))
	for i, raw := range opts.URLs {
		if all[i], err = tmpl.ForURL(raw); err != nil {
			return err
		}
	}

	// SIGINT, SIGTERM and SIGQUIT are caught from here on (one URL: from
	// 10 ms in): a probe cut short is reported, not lost to the default
	// action. A probe of one URL on loopback is over in ~1 ms, before
	// catching would have cost it a third of its time above the design
	// floor; in its first 10 ms there is no finished result to report.
	results := make([]probe.Result, len(all))
	if len(all) == 1 {
		// One URL: no goroutine to start (it costs start-up time). GOMAXPROCS
		// stays as the runtime set it: lowering it to one P here made the
		// runtime stop the world and free the second P's caches, ~4 % of a
		// probe's CPU, more than one P saved in handovers (docs/benchmarks.md).
		stop := f.SignalsCaughtAfter(signalGrace)
		results[0] = f.Probe(ctx, all[0])
		stop()
	} else {
		f.SignalsCaught()
		// At most watch's default concurrency at once (it leaves room
		// under the open-files limit): one goroutine per URL would let
		// 120 URLs under `ulimit -n 64` fail for want of sockets.
		results = probeAll(ctx, f, all, limits.Concurrency())
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
	sigCode := f.SignalCode()
	if interrupted > 0 {
		defer fmt.Fprintf(f.Streams.Err, "healthctl: interrupted (%s): %d of %s cut short\n",
			f.SignalName(), interrupted, words.Plural(len(results), "probe"))
	}

	rep := &runReport{results: results, decisions: make([]*policy.Decision, len(results)), codes: make([]int, len(results)),
		thresholds: thresholds, interruptedCode: f.ExitCode(sigCode), fold: f.ExitCode}
	if interrupted > 0 {
		rep.signalled = sigCode
	}
	code := exitcode.Pass
	for i, r := range results {
		if r.Canceled {
			continue
		}
		d, _ := policy.Decide(policy.Input{
			Outcome:  r.Outcome,
			Reason:   r.Reason,
			History:  policy.ForProbe(age, known, r.Started),
			Settings: settings,
			Now:      r.Started,
			// The policy reads a 401/403/407 (stay) and a 429 (held).
			HTTPStatus: r.HTTPStatus,
			Challenge:  report.Challenge(r),
		})
		rep.decisions[i] = &d
		// --exit-1 decided once: the JSON says the code the process exits with.
		rc := f.ExitCode(exitcode.ForResult(r.Outcome, r.Reason))
		rep.codes[i] = rc
		// The first URL that did not pass decides; a degraded pass only
		// when every URL passed.
		if len(results) == 1 || code == exitcode.Pass || code == f.ExitCode(exitcode.Degraded) && r.Outcome != classify.Pass {
			code = rc
		}
	}
	if err := f.Render(rep); err != nil {
		return err // stdout is gone (a closed pipe, a full disk): exit 74; or -o nagios's state
	}
	if interrupted > 0 {
		return cli.SilentExit(sigCode)
	}
	return cli.SilentExit(code)
}

// probeAll probes every URL with at most limit probes in flight and returns
// the results in argument order. The probes start in argument order.
func probeAll(ctx context.Context, f *cli.Factory, all []*scheme.Options, limit int) []probe.Result {
	results := make([]probe.Result, len(all))
	sem := make(chan struct{}, max(1, limit))
	var wg sync.WaitGroup
	for i, o := range all {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			defer crash.Recover()
			results[i] = f.Probe(ctx, o)
		})
	}
	wg.Wait()
	return results
}
