// Package waitcmd is `healthctl wait-healthy`: poll URLs until they pass or
// a ceiling, report how the wait ended, then (after --) run a command.
package waitcmd

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
	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/proc"
	"github.com/healthctl/healthctl/internal/statsd"
	"github.com/healthctl/healthctl/internal/wait"

	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/words"
)

// Options is what `healthctl wait-healthy` runs with, filled by its RunE.
type Options struct {
	URLs []string
	// Command is what runs once healthy (after --), exec-style.
	Command           []string
	Flags             cli.ProbeFlags
	Interval          time.Duration
	Timeout           time.Duration
	Successes         int
	FailOpen          bool
	Bypass            bool
	RespectRetryAfter bool
	UntilDown         bool
	AllowNeverUp      bool
	Statsd            string
	StatsdPrefix      string
	// flagSet names each value's source in errors (nil: the flag names).
	flagSet *pflag.FlagSet
}

// named is a value with its source, for an error about it.
func (o *Options) named(flag string) string { return cli.Named(o.flagSet, flag) }

// NewCmd builds the command; runF replaces Run in flag-parsing tests.
func NewCmd(f *cli.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
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
broken gate. After --, CMD runs once healthy (or failed open): on Unix it is
exec'd in healthctl's place (the terminal, stdin and every signal are its
own); on Windows it runs in its own process group, a SIGINT/SIGTERM to
healthctl is forwarded to it once, and its exit status is healthctl's.
126/127 when it cannot be started after probing.

--until-down inverts the goal (wait4x's --invert-check): each URL must answer
anything but a pass --successes times in a row; still passing at the ceiling is
exit 4. A URL must be seen up (one pass) before its failures count: one that
never passed (a typo, a service already stopped) gives up at the ceiling with
its own outcome's exit code, and CMD does not run; --allow-never-up counts its
failures from the first probe.`,
		Example: `  healthctl wait-healthy http://127.0.0.1:8080/health
  healthctl wait-healthy --timeout 120s https://preview.example.com/health && gh pr comment ...
  healthctl wait-healthy --successes 3 --fail-open --statsd 127.0.0.1:8125 http://app/ready -- ./post-link.sh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.URLs = args
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				opts.URLs, opts.Command = args[:dash], args[dash:]
				if len(opts.Command) == 0 {
					return cli.UsageErrorf("wait-healthy: nothing after -- (usage: healthctl wait-healthy URL... [-- CMD ARGS...])")
				}
			}
			if len(opts.URLs) == 0 {
				return cli.UsageErrorf("wait-healthy: missing URL (usage: healthctl wait-healthy URL... [-- CMD ARGS...])")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fs := cmd.Flags()
	opts.flagSet = fs
	opts.Flags.Register(fs)
	fs.DurationVar(&opts.Interval, "interval", wait.DefaultInterval, "time between probes of a URL that answers, start to start")
	fs.DurationVar(&opts.Timeout, "timeout", wait.DefaultTimeout, "ceiling: give up (or fail open) after this long")
	fs.IntVar(&opts.Successes, "successes", wait.DefaultSuccesses, "passes in a row each URL needs")
	fs.BoolVar(&opts.FailOpen, "fail-open", false, "after the ceiling, exit 0 with a WARN line instead of failing")
	fs.BoolVar(&opts.Bypass, "bypass", false, "exit 0 at once without probing (kill switch; also HEALTHCTL_BYPASS=true)")
	fs.BoolVar(&opts.RespectRetryAfter, "respect-retry-after", false, "wait as long as a Retry-After answer asks before the next probe (up to the ceiling); a 429's is always honoured")
	fs.BoolVar(&opts.UntilDown, "until-down", false, "wait until each URL stops answering healthy (--successes times in a row), as wait4x's --invert-check")
	fs.BoolVar(&opts.AllowNeverUp, "allow-never-up", false, "with --until-down: count failing answers as down before the URL was ever seen up")
	fs.StringVar(&opts.Statsd, "statsd", "", "HOST:PORT to send per-wait StatsD counters to (UDP)")
	fs.StringVar(&opts.StatsdPrefix, "statsd-prefix", statsd.DefaultPrefix, "prefix of the StatsD counters")
	return cmd
}

// Run validates the options, waits, reports and runs CMD.
func Run(ctx context.Context, f *cli.Factory, opts *Options) error {
	switch {
	case opts.Interval <= 0:
		return cli.UsageErrorf("%s: must be positive", opts.named("interval"))
	case opts.Timeout <= 0:
		return cli.UsageErrorf("%s: must be positive", opts.named("timeout"))
	case opts.Successes < 1:
		return cli.UsageErrorf("%s: want at least 1", opts.named("successes"))
	case opts.AllowNeverUp && !opts.UntilDown:
		return cli.UsageErrorf("%s: only means something with --until-down", opts.named("allow-never-up"))
	}
	if opts.Statsd != "" {
		if err := statsd.ParseAddr(opts.Statsd); err != nil {
			return cli.UsageErrorf("%s: %v", opts.named("statsd"), err)
		}
	}
	if err := statsd.ParsePrefix(opts.StatsdPrefix); err != nil {
		return cli.UsageErrorf("%s: %v", opts.named("statsd-prefix"), err)
	}
	opts.Flags.Stdin = f.Streams.In
	tmpl, err := opts.Flags.Build(f.Getenv)
	if err != nil {
		return err
	}
	targets := make([]wait.Endpoint, len(opts.URLs))
	for i, raw := range opts.URLs {
		o, err := tmpl.ForURL(raw)
		if err != nil {
			return err
		}
		targets[i] = wait.Endpoint{Options: o, URL: o.Redactor.URL(o.URL)}
	}
	if len(opts.Command) > 0 {
		// Found now, not after a 30 s wait.
		if _, err := exec.LookPath(opts.Command[0]); err != nil {
			return cli.UsageErrorf("wait-healthy: command after --: %v", err)
		}
	}

	f.SignalsCaught()
	s := f.Streams
	// Every exit code the JSON shows is the one the process ends with
	// (--exit-1 decided once, in the factory).
	codeOf := func(o classify.Outcome) int { return f.ExitCode(exitcode.ForOutcome(o)) }
	if opts.Bypass {
		// The kill switch: nothing probed, nothing counted (a bypassed gate
		// is not a wait, and must not move the fail-open alarm's ratio).
		fmt.Fprintf(s.Err, "healthctl: wait-healthy bypassed (%s): nothing probed\n", cli.FlagSource(opts.flagSet, "bypass"))
		code := exitcode.Pass
		if commandCutShort(ctx, opts.Command) {
			code = f.SignalCode()
		}
		if err := f.Render(&waitResult{bypassed: true, code: code, codeOf: codeOf}); err != nil {
			return err
		}
		return runAfter(ctx, f, opts.Command)
	}

	var metrics *statsd.Client
	var statsdNotes struct {
		sync.Mutex
		lines []string
	}
	if opts.Statsd != "" {
		// StatsD trouble never stops a wait; with -v it is noted after the
		// wait, not in the middle of the status line.
		logf := func(format string, args ...any) {
			statsdNotes.Lock()
			statsdNotes.lines = append(statsdNotes.lines, fmt.Sprintf(format, args...))
			statsdNotes.Unlock()
		}
		so := statsd.Options{Logf: logf, DNSServer: targets[0].Options.DNSServer}
		if metrics, err = statsd.New(opts.Statsd, opts.StatsdPrefix, so); err != nil {
			return cli.UsageErrorf("%s: %v", opts.named("statsd"), err)
		}
	}

	var progress *waitProgress
	if !f.Global.Quiet {
		urls := make([]string, len(targets))
		for i, t := range targets {
			urls[i] = t.URL
		}
		progress = newWaitProgress(s.Err, s.ErrCursor, s.ErrColor, s.ErrWidth, urls, opts.Successes, opts.Timeout)
		progress.untilDown = opts.UntilDown
	}
	cfg := wait.Config{
		Endpoints:         targets,
		Interval:          opts.Interval,
		Timeout:           opts.Timeout,
		Successes:         opts.Successes,
		FailOpen:          opts.FailOpen,
		RespectRetryAfter: opts.RespectRetryAfter,
		UntilDown:         opts.UntilDown,
		AllowNeverUp:      opts.AllowNeverUp,
		Probe:             f.Probe,
	}
	if metrics != nil {
		cfg.Metrics = metrics
	}
	if progress != nil {
		cfg.Observer = progress.Event
	}
	sum := waitWithTicker(ctx, f, cfg, progress)
	if progress != nil {
		progress.Close()
	}
	if metrics != nil {
		metrics.Close(statsd.FlushTimeout)
		statsdNotes.Lock()
		if f.Global.Verbose {
			for _, l := range statsdNotes.lines {
				fmt.Fprintf(s.Err, "healthctl: %s\n", l)
			}
		}
		statsdNotes.Unlock()
	}

	code, msg := waitVerdict(f, &sum, opts)
	code = f.ExitCode(code)
	if sum.Healthy && commandCutShort(ctx, opts.Command) {
		code = f.SignalCode()
	}
	if err := f.Render(&waitResult{sum: &sum, code: code, codeOf: codeOf}); err != nil {
		return err
	}
	switch {
	case sum.Healthy:
	case sum.TimedOut && opts.FailOpen:
		fmt.Fprintf(s.Err, "healthctl: WARN: %s; failing open (--fail-open)\n", msg)
	default:
		return &cli.ExitError{Code: code, Err: errors.New(msg)}
	}
	return runAfter(ctx, f, opts.Command)
}

// waitWithTicker runs the wait; on a terminal it refreshes the status
// line's elapsed time between probes; without one it writes a "still"
// line whenever ProgressEvery passed without a line.
func waitWithTicker(ctx context.Context, f *cli.Factory, cfg wait.Config, p *waitProgress) wait.Summary {
	if p == nil {
		return wait.Run(ctx, cfg)
	}
	start := time.Now()
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer crash.Recover()
		defer close(ticked)
		if f.Streams.ErrCursor {
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
		}
		t := time.NewTimer(ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.Heartbeat(time.Since(start))
				// Due again ProgressEvery after the last line, whichever
				// wrote it.
				t.Reset(max(p.NextHeartbeat()-time.Since(start), time.Millisecond))
			}
		}
	}()
	s := wait.Run(ctx, cfg)
	close(stop)
	<-ticked
	return s
}

// waitVerdict is the exit code of a finished wait and, when not healthy,
// the one line that says why: the first URL not healthy (argument order)
// decides the code and leads the line; every other URL not healthy follows
// it with its own last outcome ("; also not healthy: URL (last: ...)").
func waitVerdict(f *cli.Factory, s *wait.Summary, opts *Options) (int, string) {
	if s.Healthy {
		return exitcode.Pass, ""
	}
	i, outcome, _, _, _ := s.Culprit()
	t := s.Endpoints[i]
	last := lastPhrase(s, t, opts)
	var others []string
	for _, o := range s.Endpoints[i+1:] {
		if !o.Healthy {
			others = append(others, fmt.Sprintf("%s (%s)", o.URL, lastPhrase(s, o, opts)))
		}
	}
	also := ""
	if len(others) > 0 {
		also = "; also not healthy: " + strings.Join(others, ", ")
	}
	if s.Aborted {
		return f.SignalCode(), fmt.Sprintf("interrupted after %s waiting for %s (%s)%s", output.Seconds(s.Elapsed), t.URL, last, also)
	}
	code := exitcode.ForOutcome(outcome)
	if s.FailOpen {
		code = exitcode.Pass
	}
	if opts.UntilDown && t.NeverUp && t.LastFailure != nil {
		return code, fmt.Sprintf("%s never seen up within %s, so its failures are not counted as down (last: %s, %s after %s; --allow-never-up counts them)%s",
			t.URL, output.Duration(opts.Timeout), t.LastFailure.Outcome, t.LastFailure.Reason, words.Plural(t.Attempts, "attempt"), also)
	}
	return code, fmt.Sprintf("%s from %s within %s (%s)%s", wantPhraseFor(opts, t.URL), t.URL, output.Duration(opts.Timeout), last, also)
}

// lastPhrase says how one URL that is not healthy ended: its last
// completed failure, or why none counts.
func lastPhrase(s *wait.Summary, t wait.EndpointSummary, opts *Options) string {
	if opts.UntilDown && t.NeverUp && t.LastFailure != nil {
		return fmt.Sprintf("never seen up, last: %s, %s after %s", t.LastFailure.Outcome, t.LastFailure.Reason, words.Plural(t.Attempts, "attempt"))
	}
	if opts.UntilDown && t.Last != nil {
		// It still answered healthy: its last answer is a pass, or a
		// run of failures too short.
		if t.Streak == 0 {
			return fmt.Sprintf("last: %s, %s after %s", t.Last.Outcome, t.Last.Reason, words.Plural(t.Attempts, "attempt"))
		}
		return fmt.Sprintf("the ceiling came after %d of the %d failing answers in a row, %s: counted as timeout",
			t.Streak, opts.Successes, words.Plural(t.Attempts, "attempt"))
	}
	switch {
	case t.LastFailure != nil:
		return fmt.Sprintf("last: %s, %s after %s", t.LastFailure.Outcome, t.LastFailure.Reason, words.Plural(t.Attempts, "attempt"))
	case t.Attempts > 0:
		return fmt.Sprintf("the ceiling came after %d of the %d passes in a row, %s: counted as timeout",
			t.Streak, opts.Successes, words.Plural(t.Attempts, "attempt"))
	case s.Aborted:
		return "no probe completed"
	}
	return "no probe completed: timeout"
}

// wantPhraseFor is wantPhrase for one URL: a gRPC target never answers
// 2xx, it answers SERVING; a tcp:// or tls:// one connects.
func wantPhraseFor(opts *Options, url string) string {
	if opts.UntilDown {
		if opts.Successes > 1 {
			return fmt.Sprintf("fewer than %d failing answers in a row", opts.Successes)
		}
		return "no failing answer"
	}
	if opts.Successes <= 1 {
		// A protocol without an HTTP answer names what it misses (its
		// row: "no SERVING answer", "no connection"); HTTP's depends on
		// --expect-status.
		name, _, _ := strings.Cut(url, "://")
		if row, ok := scheme.LookupScheme(name); ok && row.Options&scheme.AppliesAnswer == 0 {
			return row.Words.Missing
		}
	}
	return wantPhrase(opts)
}

// wantPhrase names what never came: "no 2xx" with the default expectation,
// "fewer than 3 passes in a row" with --successes 3 (passes may have come,
// just not enough of them in a row).
func wantPhrase(opts *Options) string {
	if opts.Successes > 1 {
		return fmt.Sprintf("fewer than %d passes in a row", opts.Successes)
	}
	if opts.Flags.CustomExpectations() {
		return "no passing answer"
	}
	return "no 2xx"
}

// commandCutShort says a signal came before the command after -- could
// start: runAfter does not start it, and the JSON's exit_code is then the
// signal's, the code the process exits with, even when the wait was over.
func commandCutShort(ctx context.Context, argv []string) bool {
	return len(argv) > 0 && ctx.Err() != nil
}

// runAfter hands over to the command given after --. On Unix (outside
// in-process runs) it execs it in healthctl's place (exec_unix.go).
// Elsewhere it runs it with healthctl's streams, in
// its own process group (internal/proc), and returns its exit status. A
// signal to healthctl is forwarded to it once (the terminal's Ctrl-C does not
// reach it directly, so it never gets SIGINT twice); healthctl then waits for
// it and exits with its status, so a child that exits 0 on SIGTERM makes
// healthctl exit 0. A command that cannot be started now, after the probes
// ran, is 127 (not found) or 126 (cannot execute), as a shell says.
func runAfter(ctx context.Context, f *cli.Factory, argv []string) error {
	if len(argv) == 0 {
		return nil
	}
	if commandCutShort(ctx, argv) {
		fmt.Fprintf(f.Streams.Err, "healthctl: interrupted (%s) before the command after -- was started\n", f.SignalName())
		return cli.SilentExit(f.SignalCode())
	}
	if f.ReplaceProcess && canReplace {
		// The wait-for-it way: CMD becomes this process, so the
		// terminal, stdin and every signal are its own (a child in a
		// background group of its own would be stopped by SIGTTIN).
		// Only an error comes back.
		err := replaceProcess(argv)
		return &cli.ExitError{Code: startExit(err), Err: fmt.Errorf("wait-healthy: command after --: %w", err)}
	}
	s := f.Streams
	child, err := proc.Start(proc.Spec{Argv: argv, Stdin: s.In, Stdout: output.Underlying(s.Out), Stderr: s.Err})
	if err != nil {
		return &cli.ExitError{Code: startExit(err), Err: fmt.Errorf("wait-healthy: command after --: %w", err)}
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
			sig := f.Signal()
			if sig == nil {
				sig = syscall.SIGTERM
			}
			sigs <- sig
		case <-stop:
		}
	}()
	st := child.Foreground(sigs, childGrace)
	if st.Err != nil && !st.Exited && st.Signal == 0 {
		return &cli.ExitError{Code: exitcode.Internal, Err: fmt.Errorf("wait-healthy: command after --: %v", st.Err)}
	}
	return &cli.ExitError{Code: st.ExitCode(), ChildStatus: true}
}

// childGrace is how long `-- CMD` has to end after healthctl forwarded a
// signal to it, before its process group is killed.
const childGrace = 10 * time.Second

// startExit is a shell's exit code for a command that could not be
// started: 127 when it is not found, 126 when it cannot be executed.
func startExit(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return exitcode.NotFound
	}
	return exitcode.CannotExecute
}
