// Package proc supervises child processes for every command that starts one:
// wait-healthy's `-- CMD`, watch's --on-redeploy hook and drain-test's --exec.
//
// A child always runs in its own process group, so a terminal's Ctrl-C does
// not reach it behind healthctl's back (it would get SIGINT twice: once from
// the terminal, once forwarded), and so the whole group — a shell and what it
// started — can be killed when a deadline passes. Its exit status is always
// kept: a signal that stops healthctl is forwarded, then the child is waited
// for, so the caller can exit with the child's own status.
//
// Windows has no process groups in the POSIX sense and no signals but a
// console's Ctrl-C/Ctrl-Break: see proc_windows.go for what stands in for
// them, and SignalsSupported / ErrUnsupported for what cannot work there.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/healthctl/healthctl/internal/crash"
)

// Spec is what to start.
type Spec struct {
	// Argv is the program and its arguments, exec-style (no shell).
	Argv []string
	// Env is added to the current environment (later entries win).
	Env []string
	// Environ, when not nil, is the whole environment instead of the
	// current one (Env is still added).
	Environ []string
	// Dir is the working directory (empty: the current one).
	Dir string
	// Stdin, Stdout and Stderr default to nothing (/dev/null).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Attr, when set, adjusts the child's SysProcAttr after the process
	// group is set up (drain-test sets Linux's Pdeathsig).
	Attr func(*syscall.SysProcAttr)
	// Grace is Run's time between SIGTERM and SIGKILL, and how long Wait
	// waits for the captured pipes once the child has exited (0: 2s).
	Grace time.Duration
}

// DefaultGrace is Spec.Grace's default.
const DefaultGrace = 2 * time.Second

// ErrUnsupported is returned for what this platform cannot do: sending a
// POSIX signal such as SIGTERM to a process on Windows (see
// SignalsSupported). errors.Is(ErrUnsupported, errors.ErrUnsupported) holds.
var ErrUnsupported error = unsupportedError{}

type unsupportedError struct{}

func (unsupportedError) Error() string {
	return "POSIX signals cannot be sent to a process on " + runtime.GOOS
}
func (unsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// Status is how a child ended.
type Status struct {
	// Exited is true when the child ended by itself with Code.
	Exited bool
	Code   int
	// Signal is set when a signal ended the child.
	Signal syscall.Signal
	// Err is a failure to wait (not an exit status).
	Err error
}

// ExitCode is the status as a shell reports it: the code, or 128+signal.
func (s Status) ExitCode() int {
	switch {
	case s.Signal != 0:
		return 128 + int(s.Signal)
	case s.Exited:
		return s.Code
	}
	return -1
}

// String says how the child ended: "exit status 1", "killed by SIGKILL".
func (s Status) String() string {
	switch {
	case s.Signal != 0:
		return "killed by " + SignalName(s.Signal)
	case s.Exited:
		return fmt.Sprintf("exit status %d", s.Code)
	case s.Err != nil:
		return s.Err.Error()
	}
	return "unknown status"
}

// SignalName is the conventional name of a signal: SIGTERM, SIGKILL.
func SignalName(s syscall.Signal) string {
	for name, sig := range signals() {
		if sig == s {
			return "SIG" + name
		}
	}
	return fmt.Sprintf("signal %d", int(s))
}

// signals are the signals by name, built when first asked for (not at
// start-up, which every probe pays).
var signals = sync.OnceValue(func() map[string]syscall.Signal {
	m := map[string]syscall.Signal{
		"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
		"KILL": syscall.SIGKILL, "USR1": sigUSR1, "USR2": sigUSR2,
		"TERM": syscall.SIGTERM,
	}
	for name, sig := range moreSignals() {
		m[name] = sig
	}
	return m
})

// maxSignal is the highest signal number ParseSignal takes (Linux's
// real-time signals included).
const maxSignal = 64

// ParseSignal reads TERM, SIGTERM, term, WINCH or a number (15, 28): any
// signal by name or number.
func ParseSignal(s string) (syscall.Signal, error) {
	t := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "SIG")
	if sig, ok := signals()[t]; ok {
		return sig, nil
	}
	var n int
	if _, err := fmt.Sscanf(t, "%d", &n); err == nil && fmt.Sprint(n) == t && n > 0 && n <= maxSignal {
		return syscall.Signal(n), nil
	}
	return 0, fmt.Errorf("%q: want a signal name (TERM, INT, QUIT, HUP, USR1, USR2, WINCH, …) or number", s)
}

// Child is a started process in its own process group.
type Child struct {
	cmd  *exec.Cmd
	sys  childSys // what the platform keeps about the child (Windows: its job object)
	done chan struct{}
	// status is written once, before done is closed.
	status Status
}

// Start starts the child in a new process group. A program that cannot be
// found or started is an error here, before anything runs.
func Start(s Spec) (*Child, error) {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return nil, errors.New("no command")
	}
	c := exec.Command(s.Argv[0], s.Argv[1:]...)
	c.Dir = s.Dir
	switch {
	case s.Environ != nil:
		c.Env = append(append([]string{}, s.Environ...), s.Env...)
	case len(s.Env) > 0:
		c.Env = append(os.Environ(), s.Env...)
	}
	c.Stdin, c.Stdout, c.Stderr = s.Stdin, s.Stdout, s.Stderr
	c.SysProcAttr = sysProcAttr(s.Argv) // Unix: its own process group
	if s.Attr != nil {
		s.Attr(c.SysProcAttr)
	}
	// A grandchild that keeps a captured pipe open must not keep Wait
	// (and so the caller) waiting once the child itself has exited.
	c.WaitDelay = DefaultGrace
	if s.Grace > 0 {
		c.WaitDelay = s.Grace
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	ch := &Child{cmd: c, done: make(chan struct{})}
	ch.sys = started(ch)
	go ch.wait()
	return ch, nil
}

func (c *Child) wait() {
	defer crash.Recover()
	defer close(c.done)
	err := c.cmd.Wait()
	st := Status{}
	ps := c.cmd.ProcessState
	if ps == nil {
		st.Err = err
		c.status = st
		return
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Signaled():
			st.Signal = ws.Signal()
		case ws.Exited():
			st.Exited, st.Code = true, ws.ExitStatus()
		}
	} else {
		st.Exited, st.Code = true, ps.ExitCode()
	}
	if err != nil && st.Signal == 0 && !st.Exited {
		st.Err = err
	}
	c.status = st
}

// Pid is the child's process ID (and its process group's).
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Done is closed once the child has exited and been reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// Status is how the child ended; valid once Done is closed.
func (c *Child) Status() Status {
	<-c.done
	return c.status
}

// Signal sends sig to the child process itself, as an orchestrator signals
// a container's PID 1 (a shell wrapper in front of the service gets it, not
// the service).
func (c *Child) Signal(sig syscall.Signal) error {
	select {
	case <-c.done:
		return os.ErrProcessDone
	default:
	}
	return c.signal(sig)
}

// SignalGroup sends sig to the child's whole process group (Windows: see
// signalGroup in proc_windows.go).
func (c *Child) SignalGroup(sig syscall.Signal) error { return c.signalGroup(sig) }

// Kill kills the whole process group with SIGKILL and waits for the child.
// Whatever the group left behind is gone too.
func (c *Child) Kill() Status {
	_ = c.SignalGroup(syscall.SIGKILL)
	return c.Status()
}

// WaitTimeout waits up to d for the child; past it the group gets SIGTERM,
// then after grace SIGKILL. killed reports whether healthctl had to end it.
func (c *Child) WaitTimeout(d, grace time.Duration) (st Status, killed bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
		return c.status, false
	case <-t.C:
	}
	// On Linux, what the child started, taken while it still runs: a
	// descendant that left the group (setsid) is still found.
	tree := descendantsOf(c.Pid())
	_ = c.SignalGroup(syscall.SIGTERM)
	g := time.NewTimer(grace)
	defer g.Stop()
	select {
	case <-c.done:
	case <-g.C:
	}
	// Whichever won: the reap of a leader that SIGTERM ended says nothing
	// of the rest of its group — a grandchild that ignores SIGTERM and
	// holds the captured pipe delays that reap (WaitDelay) and would
	// outlive healthctl. The group and the descendants get SIGKILL always.
	c.killAll(tree)
	<-c.done
	return c.status, true
}

// killAll sends SIGKILL to the child's whole process group (also once the
// child itself has been reaped: the group lives while any member does, and
// its ID is not reused meanwhile) and, on Linux, to the descendants found
// in tree, and below the child now while it has not been reaped (after
// that its pid may name another process).
func (c *Child) killAll(tree []procID) {
	select {
	case <-c.done:
	default:
		tree = append(tree, descendantsOf(c.Pid())...)
	}
	_ = c.SignalGroup(syscall.SIGKILL)
	killProcs(tree)
}

// Foreground runs the child to its end with the caller's streams, the way
// `wait-healthy -- CMD` does: the first signal from sigs (healthctl's own
// SIGINT/SIGTERM) is forwarded to the child's group once, then the child is
// waited for and its status returned. After forwarding, a child that is
// still running after grace is killed.
func (c *Child) Foreground(sigs <-chan os.Signal, grace time.Duration) Status {
	select {
	case <-c.done:
		return c.status
	case s := <-sigs:
		if sig, ok := s.(syscall.Signal); ok {
			_ = c.SignalGroup(sig)
		}
	}
	st, _ := c.WaitTimeout(grace, time.Second)
	return st
}

// Result is what Run returns about a bounded, captured run.
type Result struct {
	Status Status
	// Output is the start of the child's combined stdout and stderr.
	Output string
	// Truncated says Output was cut at the limit.
	Truncated bool
	// TimedOut says the child outlived its timeout and was killed.
	TimedOut bool
	Duration time.Duration
}

// Run runs s to its end, bounded by timeout (then its group is terminated,
// and killed 2s later), with stdout and stderr captured together up to
// maxOutput bytes. ctx cancellation ends it like a timeout. A command that
// cannot start is an error; anything after that is in the Result.
func Run(ctx context.Context, s Spec, timeout time.Duration, maxOutput int) (Result, error) {
	buf := &capWriter{max: maxOutput}
	s.Stdout, s.Stderr = buf, buf
	start := time.Now()
	c, err := Start(s)
	if err != nil {
		return Result{}, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	res := Result{}
	select {
	case <-c.done:
	case <-t.C:
		res.TimedOut = true
	case <-ctx.Done():
		res.TimedOut = true
	}
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	if res.TimedOut {
		res.Status, _ = c.WaitTimeout(0, grace)
	} else {
		res.Status = c.status
		// The child ended by itself: what it left running in its group
		// (a `cmd &` that holds no pipe, or one that WaitDelay cut off)
		// must not outlive the run either.
		c.killAll(nil)
	}
	res.Duration = time.Since(start)
	res.Output, res.Truncated = buf.result()
	return res, nil
}

// capWriter keeps the first max bytes written to it; the rest is counted,
// not kept, so a chatty hook cannot grow healthctl's memory.
type capWriter struct {
	mu        sync.Mutex
	max       int
	buf       bytes.Buffer
	truncated bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - w.buf.Len(); room < len(p) {
		if room > 0 {
			w.buf.Write(p[:room])
		}
		w.truncated = true
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}

func (w *capWriter) result() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String(), w.truncated
}
