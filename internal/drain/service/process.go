package service

// The process side of drain-test: start the service or attach to it, send
// the signal, wait for the exit, and kill whatever it left (the process
// group and, on Linux, every descendant).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/proc"
)

// KillMargin is how long past S drain-test waits before it kills.
func KillMargin(s time.Duration) time.Duration { return time.Second + s/10 }

// StartError is a service that could not be started or attached to.
type StartError struct{ Err error }

func (e *StartError) Error() string { return e.Err.Error() }

func (e *StartError) Unwrap() error { return e.Err }

// Spec says which service to run: Argv starts it (--exec), else Pid
// attaches to a running one (--pid); Env is added to its environment, and
// Stdout and Stderr receive its output (nil: discarded).
type Spec struct {
	Argv           []string
	Env            []string
	Pid            int
	Stdout, Stderr io.Writer
}

// Target is the process under test, started or attached.
type Target struct {
	child *proc.Child
	pid   int
	gone  chan struct{}
	// goneAt is when the process was seen gone; written before gone closes.
	goneAt time.Time
	// unhook removes the crash hook that kills a started child.
	unhook func()
	// copied closes once the service's output is all copied (nil: none
	// to copy).
	copied <-chan struct{}
}

// Pid is the process's id.
func (tg *Target) Pid() int { return tg.pid }

// Gone closes once the process is seen gone.
func (tg *Target) Gone() <-chan struct{} { return tg.gone }

// GoneAt is when the process was seen gone (zero before Gone closes).
func (tg *Target) GoneAt() time.Time { return tg.goneAt }

// Child is the started child (nil when attached to a --pid).
func (tg *Target) Child() *proc.Child { return tg.child }

// OutputCopied waits, at most d, for the service's output to be copied
// to drain-test's own writers: after it, nothing else writes to them.
func (tg *Target) OutputCopied(d time.Duration) {
	if tg.copied == nil {
		return
	}
	select {
	case <-tg.copied:
	case <-time.After(d):
	}
}

// Status says how a gone target ended, when it can be read.
func (tg *Target) Status() string {
	if tg.child != nil {
		return tg.child.Status().String()
	}
	return "gone"
}

// Start starts the service (--exec) or attaches to a running one (--pid).
// A service that cannot be started or signalled is a *StartError.
func Start(ctx context.Context, cfg Spec, logf func(string, ...any)) (*Target, error) {
	tg := &Target{gone: make(chan struct{})}
	if len(cfg.Argv) == 0 {
		switch err := signalPid(cfg.Pid, 0); {
		case errors.Is(err, syscall.ESRCH) || (err == nil && !Alive(cfg.Pid)):
			return nil, &StartError{fmt.Errorf("--pid %d: no such process", cfg.Pid)}
		case errors.Is(err, syscall.EPERM):
			return nil, &StartError{fmt.Errorf("--pid %d: not permitted to signal it (run drain-test as its user, or as root)", cfg.Pid)}
		}
		tg.pid = cfg.Pid
		crash.Go(func() { watchPid(ctx, tg) })
		return tg, nil
	}
	keepDescendants()
	// The service's output goes through a pipe of our own, handed over
	// as a file: given a plain writer (drain-test's stderr under a test
	// harness, a CI log), os/exec copies through its own pipe and Wait
	// returns only once every holder of it has closed it — an orphan the
	// exited init left running kept the init's exit from being seen
	// (tini -g with a dying shell looked like a clean exit at the
	// service's exit, never WRAPPER_EXITED_EARLY).
	stdout, stderr, closeOut, copied := outputFiles(cfg.Stdout, cfg.Stderr)
	c, err := proc.Start(proc.Spec{Argv: cfg.Argv, Env: cfg.Env, Stdout: stdout, Stderr: stderr, Attr: childAttr})
	closeOut()
	if err != nil {
		return nil, &StartError{fmt.Errorf("cannot start the service %q: %w", cfg.Argv[0], unwrapExec(err))}
	}
	tg.child, tg.pid, tg.copied = c, c.Pid(), copied
	tg.unhook = crash.OnCrash(func() { tg.killAll() })
	crash.Go(func() {
		<-c.Done()
		tg.goneAt = time.Now()
		close(tg.gone)
	})
	logf("started pid %d: %s", tg.pid, strings.Join(cfg.Argv, " "))
	return tg, nil
}

// unwrapExec drops os/exec's "fork/exec PATH:" prefix: the caller names
// the program already.
func unwrapExec(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// Teardown kills whatever a started child left (a wrapper's orphan, a
// helper, a daemon that called setsid) with the child, and returns once
// they are gone; it reports whether anything was left. An attached process
// is not healthctl's to kill.
func (tg *Target) Teardown(logf func(string, ...any)) (leftover bool) {
	if tg.child == nil {
		return false
	}
	defer tg.unhook()
	if leftAlive(tg.pid) {
		leftover = true
		logf("killing what is left of process group %d and every process it started", tg.pid)
	}
	if n := tg.killAll(); n > 0 {
		logf("%d processes started by pid %d still run 5s after SIGKILL", n, tg.pid)
	}
	return leftover
}

// killAll kills the child's process group and (Linux) every descendant,
// waits for the child, and returns once the rest are gone too (5s at
// most): a check right after healthctl exits finds nothing listening. It
// returns how many still ran.
func (tg *Target) killAll() int {
	tg.child.Kill()
	n := killTree(tg.pid, 5*time.Second)
	for end := time.Now().Add(5 * time.Second); groupExists(tg.pid) && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	return n
}

// SendSignal sends sig to the process itself (not its group, as an
// orchestrator signals PID 1) and returns t=0, when it was sent.
func SendSignal(sig syscall.Signal, tg *Target, logf func(string, ...any)) time.Time {
	t0 := time.Now()
	var err error
	if tg.child != nil {
		err = tg.child.Signal(sig)
	} else {
		err = signalPid(tg.pid, sig)
	}
	if err != nil {
		logf("signalling pid %d: %v", tg.pid, err)
	}
	logf("sent %s to pid %d", proc.SignalName(sig), tg.pid)
	return t0
}

// AwaitExit waits for the process to exit. Past S plus KillMargin it kills
// it (killedAt says when); when ctx ends (drain-test interrupted) it kills
// a started child and waits for it.
func AwaitExit(ctx context.Context, S time.Duration, tg *Target, t0 time.Time, logf func(string, ...any)) (killedAt time.Time, interrupted bool) {
	deadline := time.NewTimer(S + KillMargin(S))
	defer deadline.Stop()
	select {
	case <-tg.gone:
	case <-deadline.C:
		killedAt = time.Now()
		logf("pid %d still running %s after the signal (SHUTDOWN_TIMEOUT %s + margin): killing it", tg.pid, killedAt.Sub(t0).Round(time.Millisecond), S)
		tg.kill()
		select {
		case <-tg.gone:
		case <-time.After(5 * time.Second):
			// Unkillable (uninterruptible sleep) or not ours to kill: the
			// report says it did not exit.
			logf("pid %d still there 5s after SIGKILL; giving up", tg.pid)
		}
	case <-ctx.Done():
		interrupted = true
		logf("interrupted: killing pid %d", tg.pid)
		if tg.child != nil {
			tg.child.Kill()
			<-tg.gone
		}
	}
	return killedAt, interrupted
}

// kill ends the process past the deadline: the child's whole group, or the
// attached pid (as an orchestrator's SIGKILL would).
func (tg *Target) kill() {
	if tg.child != nil {
		_ = tg.child.SignalGroup(syscall.SIGKILL)
		return
	}
	_ = signalPid(tg.pid, syscall.SIGKILL)
}

// watchPid closes tg.gone once the attached pid no longer runs (no such
// process, or a zombie its parent has not reaped yet).
func watchPid(ctx context.Context, tg *Target) {
	for {
		if !Alive(tg.pid) {
			tg.goneAt = time.Now()
			close(tg.gone)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// outputFiles hands the service files for its output: w itself when it is
// one (or nil), else the write end of a pipe copied into w. closeParent
// closes the parent's write ends once the child has them.
func outputFiles(out, errw io.Writer) (stdout, stderr io.Writer, closeParent func(), copied <-chan struct{}) {
	var ends []*os.File
	var copies sync.WaitGroup
	file := func(w io.Writer) io.Writer {
		if w == nil {
			return nil
		}
		if f, ok := w.(*os.File); ok {
			return f
		}
		r, pw, err := os.Pipe()
		if err != nil {
			return w // os/exec's own pipe, as before
		}
		ends = append(ends, pw)
		copies.Add(1)
		crash.Go(func() {
			defer copies.Done()
			_, _ = io.Copy(w, r)
			r.Close()
		})
		return pw
	}
	stdout = file(out)
	if errw == out {
		stderr = stdout
	} else {
		stderr = file(errw)
	}
	done := make(chan struct{})
	go func() { copies.Wait(); close(done) }()
	return stdout, stderr, func() {
		for _, f := range ends {
			f.Close()
		}
	}, done
}
