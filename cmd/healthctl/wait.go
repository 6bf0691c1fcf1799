package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/proc"
	"github.com/healthctl/healthctl/internal/statsd"
	"github.com/healthctl/healthctl/internal/wait"
)

func init() {
	registerCommand("wait-healthy", func(a *app) *cobra.Command { return a.newWaitCmd(nil) })
}

// waitOptions is what `healthctl wait-healthy` runs with, filled by its RunE.
type waitOptions struct {
	urls []string
	// command is what runs once healthy (after --), exec-style.
	command           []string
	flags             probeFlags
	interval          time.Duration
	timeout           time.Duration
	successes         int
	failOpen          bool
	bypass            bool
	respectRetryAfter bool
	statsd            string
	statsdPrefix      string
}

// newWaitCmd builds the command; runF replaces waitRun in flag-parsing tests.
func (a *app) newWaitCmd(runF func(context.Context, *waitOptions) error) *cobra.Command {
	opts := &waitOptions{}
	cmd := &cobra.Command{
		Use:   "wait-healthy URL... [-- CMD ARGS...]",
		Short: "Wait until URLs pass, then exit 0 (or run CMD)",
		Long: `Poll each URL until it passes --successes times in a row, or the --timeout
ceiling passes. The first probe goes at once, then one per --interval (start to
start) while a server answers anything; while nothing listens (connection
refused) a URL is re-probed every 50ms, at most 20 times a second per address
dialled (127.0.0.1:8080 and localhost:8080 share one budget).

Exit 0 when every URL is healthy. Otherwise the exit code of the last completed
failure of the first URL (argument order) that is not healthy (4, timeout, if no
probe completed), with one line saying why and for how long it tried.
--fail-open exits 0 after the ceiling with one WARN line; --bypass (or
HEALTHCTL_BYPASS=true) exits 0 at once without probing: a kill switch for a
broken gate. After --, CMD runs once healthy (or failed open), in its own
process group; a SIGINT/SIGTERM to healthctl is forwarded to it once, and its
exit status is healthctl's (126/127 when it cannot be started after probing).`,
		Example: `  healthctl wait-healthy http://127.0.0.1:8080/health
  healthctl wait-healthy --timeout 120s https://preview.example.com/health && gh pr comment ...
  healthctl wait-healthy --successes 3 --fail-open --statsd 127.0.0.1:8125 http://app/ready -- ./post-link.sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.urls = args
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				opts.urls, opts.command = args[:dash], args[dash:]
				if len(opts.command) == 0 {
					return usageErrorf("wait-healthy: nothing after -- (usage: healthctl wait-healthy URL... [-- CMD ARGS...])")
				}
			}
			if len(opts.urls) == 0 {
				return usageErrorf("wait-healthy: missing URL (usage: healthctl wait-healthy URL... [-- CMD ARGS...])")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return a.waitRun(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	opts.flags.register(fs)
	fs.DurationVar(&opts.interval, "interval", wait.DefaultInterval, "time between probes of a URL that answers, start to start")
	fs.DurationVar(&opts.timeout, "timeout", wait.DefaultTimeout, "ceiling: give up (or fail open) after this long")
	fs.IntVar(&opts.successes, "successes", wait.DefaultSuccesses, "passes in a row each URL needs")
	fs.BoolVar(&opts.failOpen, "fail-open", false, "after the ceiling, exit 0 with a WARN line instead of failing")
	fs.BoolVar(&opts.bypass, "bypass", false, "exit 0 at once without probing (kill switch; also HEALTHCTL_BYPASS=true)")
	fs.BoolVar(&opts.respectRetryAfter, "respect-retry-after", false, "wait as long as a Retry-After answer asks before the next probe (up to the ceiling)")
	fs.StringVar(&opts.statsd, "statsd", "", "HOST:PORT to send per-wait StatsD counters to (UDP)")
	fs.StringVar(&opts.statsdPrefix, "statsd-prefix", statsd.DefaultPrefix, "prefix of the StatsD counters")
	return cmd
}

// waitRun validates the options, waits, reports and runs CMD.
func (a *app) waitRun(ctx context.Context, opts *waitOptions) error {
	switch {
	case opts.interval <= 0:
		return usageErrorf("--interval %v: must be positive", opts.interval)
	case opts.timeout <= 0:
		return usageErrorf("--timeout %v: must be positive", opts.timeout)
	case opts.successes < 1:
		return usageErrorf("--successes %d: want at least 1", opts.successes)
	}
	if opts.statsd != "" {
		if err := statsd.ParseAddr(opts.statsd); err != nil {
			return usageErrorf("--statsd %q: %v", opts.statsd, err)
		}
	}
	if err := statsd.ParsePrefix(opts.statsdPrefix); err != nil {
		return usageErrorf("--statsd-prefix %q: %v", opts.statsdPrefix, err)
	}
	tmpl, err := opts.flags.build(a.getenv)
	if err != nil {
		return err
	}
	targets := make([]wait.Target, len(opts.urls))
	for i, raw := range opts.urls {
		o, err := tmpl.forURL(raw)
		if err != nil {
			return err
		}
		targets[i] = wait.Target{Options: o, URL: o.Redactor.URL(o.URL)}
	}
	if len(opts.command) > 0 {
		// Found now, not after a 30 s wait.
		if _, err := exec.LookPath(opts.command[0]); err != nil {
			return usageErrorf("wait-healthy: command after --: %v", err)
		}
	}

	a.signalsCaught()
	s := a.streams
	if opts.bypass {
		// The kill switch: nothing probed, nothing counted (a bypassed gate
		// is not a wait, and must not move the fail-open alarm's ratio).
		fmt.Fprintln(s.Err, "healthctl: wait-healthy bypassed (--bypass or HEALTHCTL_BYPASS): nothing probed")
		if a.json() {
			_ = output.JSONLine(s.Out, output.NewWaitJSON(nil, true, ExitPass, ExitCode))
		}
		return a.runAfter(ctx, opts.command)
	}

	var metrics *statsd.Client
	var statsdNotes struct {
		sync.Mutex
		lines []string
	}
	if opts.statsd != "" {
		// StatsD trouble never stops a wait; with -v it is noted after the
		// wait, not in the middle of the status line.
		logf := func(format string, args ...any) {
			statsdNotes.Lock()
			statsdNotes.lines = append(statsdNotes.lines, fmt.Sprintf(format, args...))
			statsdNotes.Unlock()
		}
		so := statsd.Options{Logf: logf, DNSServer: targets[0].Options.DNSServer}
		if metrics, err = statsd.New(opts.statsd, opts.statsdPrefix, so); err != nil {
			return usageErrorf("--statsd %q: %v", opts.statsd, err)
		}
	}

	var progress *output.WaitProgress
	if !a.global.quiet {
		progress = output.NewWaitProgress(s.Err, s.ErrTTY, s.ErrColor, s.ErrWidth, len(targets), opts.successes)
	}
	cfg := wait.Config{
		Targets:           targets,
		Interval:          opts.interval,
		Timeout:           opts.timeout,
		Successes:         opts.successes,
		FailOpen:          opts.failOpen,
		RespectRetryAfter: opts.respectRetryAfter,
		Probe:             a.probe,
	}
	if metrics != nil {
		cfg.Metrics = metrics
	}
	if progress != nil {
		cfg.Observer = progress.Event
	}
	sum := a.waitWithTicker(ctx, cfg, progress)
	if progress != nil {
		progress.Close()
	}
	if metrics != nil {
		metrics.Close(statsd.FlushTimeout)
		statsdNotes.Lock()
		if a.global.verbose {
			for _, l := range statsdNotes.lines {
				fmt.Fprintf(s.Err, "healthctl: %s\n", l)
			}
		}
		statsdNotes.Unlock()
	}

	code, msg := a.waitVerdict(&sum, opts)
	if a.json() {
		_ = output.JSONLine(s.Out, output.NewWaitJSON(&sum, false, code, ExitCode))
	}
	switch {
	case sum.Healthy:
		if !a.json() && !a.global.quiet {
			for _, t := range sum.Targets {
				fmt.Fprintln(s.Out, output.FirstLine(*t.Last, s.OutColor))
				if a.global.verbose {
					output.Details(s.Out, *t.Last, nil, s.OutColor)
				}
			}
		}
	case sum.TimedOut && opts.failOpen:
		fmt.Fprintf(s.Err, "healthctl: WARN: %s; failing open (--fail-open)\n", msg)
	default:
		return &exitError{code: code, err: errors.New(msg)}
	}
	return a.runAfter(ctx, opts.command)
}

// waitWithTicker runs the wait; on a terminal it refreshes the status
// line's elapsed time between probes.
func (a *app) waitWithTicker(ctx context.Context, cfg wait.Config, p *output.WaitProgress) wait.Summary {
	if p == nil || !a.streams.ErrTTY {
		return wait.Run(ctx, cfg)
	}
	start := time.Now()
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer crash.Recover()
		defer close(ticked)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.Tick(time.Since(start))
			}
		}
	}()
	s := wait.Run(ctx, cfg)
	close(stop)
	<-ticked
	return s
}

// waitVerdict is the exit code of a finished wait and, when not healthy,
// the one line that says why.
func (a *app) waitVerdict(s *wait.Summary, opts *waitOptions) (int, string) {
	if s.Healthy {
		return ExitPass, ""
	}
	i, outcome, reason, completed, _ := s.Culprit()
	t := s.Targets[i]
	var last string
	switch {
	case completed:
		last = fmt.Sprintf("last: %s, %s after %d attempt%s", outcome, reason, t.Attempts, waitPlural(t.Attempts))
	case t.Attempts > 0:
		last = fmt.Sprintf("%d pass%s in a row of %d after %d attempt%s; counted as timeout",
			t.Streak, waitPluralES(t.Streak), opts.successes, t.Attempts, waitPlural(t.Attempts))
	case s.Aborted:
		last = "no probe completed"
	default:
		last = "no probe completed: timeout"
	}
	if s.Aborted {
		return a.signalCode(), fmt.Sprintf("interrupted after %s waiting for %s (%s)", output.Seconds(s.Elapsed), t.URL, last)
	}
	code := ExitCode(outcome)
	if s.FailOpen {
		code = ExitPass
	}
	return code, fmt.Sprintf("%s from %s within %s (%s)", a.wantPhrase(opts), t.URL, waitDuration(opts.timeout), last)
}

// wantPhrase names what never came: "no 2xx" with the default expectation.
func (a *app) wantPhrase(opts *waitOptions) string {
	custom := opts.flags.customExpectations()
	prefix := ""
	if opts.successes > 1 {
		prefix = fmt.Sprintf("%d in a row: ", opts.successes)
	}
	if custom {
		return prefix + "no passing answer"
	}
	return prefix + "no 2xx"
}

// runAfter runs the command given after --, with healthctl's streams, in
// its own process group (internal/proc), and returns its exit status. A
// signal to healthctl is forwarded to it once (the terminal's Ctrl-C does not
// reach it directly, so it never gets SIGINT twice); healthctl then waits for
// it and exits with its status, so a child that exits 0 on SIGTERM makes
// healthctl exit 0. A command that cannot be started now, after the probes
// ran, is 127 (not found) or 126 (cannot execute), as a shell says.
func (a *app) runAfter(ctx context.Context, argv []string) error {
	if len(argv) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return silentExit(a.signalCode())
	}
	s := a.streams
	child, err := proc.Start(proc.Spec{Argv: argv, Stdin: s.In, Stdout: s.Out, Stderr: s.Err})
	if err != nil {
		return &exitError{code: startExit(err), err: fmt.Errorf("wait-healthy: command after --: %w", err)}
	}
	remove := crash.OnCrash(func() { child.Kill() })
	defer remove()
	sigs := make(chan os.Signal, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer crash.Recover()
		select {
		case <-ctx.Done():
			sig, _ := a.signal.Load().(os.Signal)
			if sig == nil {
				sig = syscall.SIGTERM
			}
			sigs <- sig
		case <-stop:
		}
	}()
	st := child.Foreground(sigs, childGrace)
	if st.Err != nil && !st.Exited && st.Signal == 0 {
		return &exitError{code: ExitInternal, err: fmt.Errorf("wait-healthy: command after --: %v", st.Err)}
	}
	return &exitError{code: st.ExitCode(), childStatus: true}
}

// childGrace is how long `-- CMD` has to end after healthctl forwarded a
// signal to it, before its process group is killed.
const childGrace = 10 * time.Second

// startExit is a shell's exit code for a command that could not be
// started: 127 when it is not found, 126 when it cannot be executed.
func startExit(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return ExitNotFound
	}
	return ExitCannotExecute
}

// waitDuration prints 30s, 2m, 1m30s, 500ms (not 2m0s).
func waitDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func waitPlural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func waitPluralES(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}
