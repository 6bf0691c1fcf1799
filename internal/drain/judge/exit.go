package judge

// The process's verdicts: SHUTDOWN_HANG, NONZERO_EXIT (EXIT_CODE_UNKNOWN),
// SIGNAL_NOT_FORWARDED and WRAPPER_EXITED_EARLY.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/words"
)

// judgeShutdown: the process exits by S: the whole teardown (pre-drain,
// server close, then its own cleanup, which may take any part of S).
func judgeShutdown(x evidence.Exit, s evidence.Settings) Verdict {
	S := s.ShutdownTimeout
	switch {
	case x.Killed:
		return verdict(ShutdownHang, false, fmt.Sprintf("still running at %s > SHUTDOWN_TIMEOUT %s: killed by healthctl", ms(x.KilledAt), ms(S)))
	case !x.Gone:
		return verdict(ShutdownHang, false, "the process did not exit")
	case x.At > S:
		return verdict(ShutdownHang, false, fmt.Sprintf("exited at %s > SHUTDOWN_TIMEOUT %s", ms(x.At), ms(S)))
	}
	return verdict(ShutdownHang, true, fmt.Sprintf("exited at %s <= SHUTDOWN_TIMEOUT %s", ms(x.At), ms(S)))
}

// judgeExitStatus: exit status 0, or 128+N after signal N was sent (the
// conventional exit of a runtime that handled it: the JVM exits 143 after
// its shutdown hooks ran). Killed by the signal itself after a visible
// drain (readiness flipped, listener open through P) is a service that
// re-raised it. In attach mode the status usually cannot be read:
// EXIT_CODE_UNKNOWN, skipped.
func judgeExitStatus(o evidence.Observation, flip, closed, P time.Duration) Verdict {
	x := o.Exit
	switch {
	case x.Killed:
		return skipped(NonzeroExit, "killed by healthctl (see "+ShutdownHang+")")
	case !x.Gone:
		return skipped(NonzeroExit, "the process did not exit")
	case !x.Known:
		return skipped(ExitCodeUnknown, "pid "+fmt.Sprint(o.Pid)+" is gone; the exit status of a process healthctl did not start cannot be read (use --exec to judge it)")
	case diedOfSignal(o) && outlived(o) != "":
		// A wrapper (npm, sh -c without exec) that died of the signal
		// while what it started ran on: the signal was not passed on.
		// Whatever the in-flight requests did, nothing here shows that
		// the service handled the signal.
		if flip >= 0 {
			// The service got the signal too (tini -g, dumb-init's group
			// mode): the wrapper's exit first is WRAPPER_EXITED_EARLY's,
			// and its status says nothing of the service's.
			return skipped(NonzeroExit, fmt.Sprintf("%s ended (%s) at %s before the service it ran (see %s): its exit status is not the service's", who(o), x, ms(x.At), WrapperExitedEarly))
		}
		return verdict(NonzeroExit, false, fmt.Sprintf("%s was %s at %s while %s: the wrapper did not pass %s on, and the service never got it (readiness never flipped); nothing here shows the service handling %s; exec the service (sh -c 'exec svc …'), or run it under an init that forwards signals", who(o), x, ms(x.At), outlived(o), o.Signal, o.Signal))
	case x.Signal != "" && x.Signal == o.Signal && flip >= 0 && (closed < 0 || closed >= P):
		return verdict(NonzeroExit, false, fmt.Sprintf("re-raised %s after draining (readiness flipped at %s, the listener stayed open through P): the process ended killed by %s, which supervisors count as a failed exit; exit 0 once drained instead (%s)", o.Signal, ms(flip), o.Signal, reRaiseFix))
	case x.Signal != "" && x.Signal == o.Signal && finishedAfterSignal(o) > 0:
		// Puma: a graceful stop (in-flight requests finish), then the
		// signal raised again: handled, not ignored.
		return verdict(NonzeroExit, false, fmt.Sprintf("re-raised %s after finishing %s in flight at the signal: it handled %s, then ended killed by it, which supervisors count as a failed exit; exit 0 once drained instead (%s)", o.Signal, words.Plural(finishedAfterSignal(o), "request"), o.Signal, reRaiseFix))
	case x.Signal != "" && x.Signal != o.Signal:
		return verdict(NonzeroExit, false, fmt.Sprintf("the process was %s, not by the %s sent: it crashed or was killed while shutting down", x, o.Signal))
	case x.Signal != "":
		return verdict(NonzeroExit, false, "the process was "+x.String()+": it did not handle "+o.Signal)
	case x.Code != 0 && o.SignalNumber > 0 && x.Code == 128+o.SignalNumber && slices.Contains(wrappers, o.Command):
		// tini, catatonit, dumb-init and shells pass on the exit of the
		// process they ran: 143 is that process ended by SIGTERM.
		return verdict(NonzeroExit, true, fmt.Sprintf("exit status %d = 128 + %d (%s): %s passes on that the process it ran ended by %s", x.Code, o.SignalNumber, o.Signal, o.Command, o.Signal))
	case x.Code != 0 && o.SignalNumber > 0 && x.Code == 128+o.SignalNumber:
		return verdict(NonzeroExit, true, fmt.Sprintf("exit status %d = 128 + %d (%s): the conventional exit after handling %s (%s)", x.Code, o.SignalNumber, o.Signal, o.Signal, conventionalExitNote(o.Command)))
	case x.Code != 0:
		return verdict(NonzeroExit, false, fmt.Sprintf("exit status %d", x.Code))
	}
	return verdict(NonzeroExit, true, "exit status 0")
}

// conventionalExitNote says which runtime exits 128+N after handling
// signal N: the signalled program's own when it is one known to (java,
// next), else both.
func conventionalExitNote(command string) string {
	const jvm, next = "the JVM exits so after its shutdown hooks ran", "next start exits so once its server has closed and the requests in flight are done"
	switch command {
	case "java":
		return jvm
	case "next":
		return next
	}
	return jvm + "; " + next
}

// diedOfSignal says the signalled process ended of the signal sent: killed
// by it, or the 128+N a shell or init reports for it.
func diedOfSignal(o evidence.Observation) bool {
	x := o.Exit
	return x.Signal != "" && x.Signal == o.Signal || x.Signal == "" && o.SignalNumber > 0 && x.Code == 128+o.SignalNumber
}

// outlived says what of the signalled process outlived it ("": nothing
// seen): an endpoint that answered after it exited, or processes of its
// group left running.
func outlived(o evidence.Observation) string {
	if a := answeredAfterExit(o); a != nil {
		return fmt.Sprintf("what it started still answered (%s %s at %s)", a.Probe, a.Said(), ms(a.At))
	}
	if o.Leftover {
		return "processes it started outlived it (killed by healthctl)"
	}
	return ""
}

// who names the signalled process: "pid 42 (sh)".
func who(o evidence.Observation) string {
	w := fmt.Sprintf("pid %d", o.Pid)
	if o.Command != "" {
		w += " (" + o.Command + ")"
	}
	return w
}

// reRaiseFix names the settings that stop the common servers re-raising
// the signal after a graceful stop.
const reRaiseFix = "Puma: raise_exception_on_sigterm false; @godaddy/terminus: useExit0: true"

// finishedAfterSignal counts the in-flight requests that completed after
// the signal, before the process exited.
func finishedAfterSignal(o evidence.Observation) int {
	n := 0
	for _, q := range o.Inflight {
		if q.OK() && q.End >= 0 && !shortDelimited(q, o) {
			n++
		}
	}
	return n
}

// judgeSignal: something reacted to the signal, it was the service (no
// endpoint answers after the signalled process exited), and nothing of its
// process group outlived it. flip is when readiness flipped (notSeen:
// never); liveFailed says liveness failed during the pre-drain.
func judgeSignal(o evidence.Observation, flip time.Duration, liveFailed bool) Verdict {
	x := o.Exit
	after := answeredAfterExit(o)
	var why []string
	wrapperFirst := after != nil && flip >= 0
	if wrapperFirst {
		// The service got the signal (readiness flipped) but outlived
		// the process signalled: WRAPPER_EXITED_EARLY's, not this.
		after = nil
	}
	if after != nil {
		why = append(why, fmt.Sprintf("pid %d exited (%s) at %s, but %s still answered %d at %s: the signal reached a wrapper (a shell?), not the service; exec the service or use an init that forwards signals", o.Pid, x, ms(x.At), after.Probe, after.Status, ms(after.At)))
	} else if !reacted(o, flip, liveFailed) {
		why = append(why, fmt.Sprintf("nothing reacted to %s: readiness stayed 200, the listener stayed open and the process kept running (a wrapper that swallows the signal?)", o.Signal))
	}
	if o.Leftover && !wrapperFirst {
		why = append(why, "processes of its group outlived the signalled process (killed by healthctl)")
	}
	if len(why) > 0 {
		return verdict(SignalNotForwarded, false, strings.Join(why, "; "))
	}
	return verdict(SignalNotForwarded, true, "the service reacted to "+o.Signal)
}

// answeredAfterExit is the first poll answered after the signalled
// process exited (nil: none was).
func answeredAfterExit(o evidence.Observation) *evidence.Poll {
	x := o.Exit
	if !x.Gone || x.Killed {
		return nil
	}
	var after *evidence.Poll
	for i, p := range o.Polls {
		if p.At > x.At && p.Answered() && (after == nil || p.At < after.At) {
			after = &o.Polls[i]
		}
	}
	return after
}

// wrappers are the programs that run a service rather than being it:
// inits and shells. In a container one is PID 1, and its exit ends the
// container, whatever still runs under it. A slice, which the linker lays
// out: a package-level map literal is built at every start, probe included.
var wrappers = []string{
	"tini", "tini-static", "dumb-init", "catatonit", "s6-svscan",
	"sh", "bash", "dash", "ash", "zsh", "ksh", "busybox",
	"supervisord", "npm", "yarn", "pnpm",
	"runsvdir", "runsv", "pm2-runtime",
}

// judgeWrapper: the signalled process does not exit before the service
// it runs. When the signal reached the service (readiness flipped) and the
// service still answered after the signalled process exited, that process
// was an init or shell that exited first: in a container, PID 1's exit
// kills the service mid-drain (under tini -g or dumb-init's group mode,
// the sh -c between them dies of the signal; the init then exits). flip
// is when readiness flipped (notSeen: never).
func judgeWrapper(o evidence.Observation, flip time.Duration) Verdict {
	x := o.Exit
	after := answeredAfterExit(o)
	if after == nil || flip < 0 {
		if after != nil {
			return verdict(WrapperExitedEarly, true, "the service never got the signal (see "+SignalNotForwarded+")")
		}
		return verdict(WrapperExitedEarly, true, fmt.Sprintf("nothing answered after pid %d exited", o.Pid))
	}
	fix := "exec the service from the process signalled, or make it wait for the service"
	if slices.Contains(wrappers, o.Command) || o.Command == "" {
		fix = "exec the service: sh -c 'exec svc …' (a shell that does not exec dies of the signal, and an init — tini, dumb-init — exits with its child, orphaning the service)"
	}
	return verdict(WrapperExitedEarly, false, fmt.Sprintf("%s exited (%s) at %s while the service it ran still answered (%s %s at %s; readiness had flipped at %s: the service got the signal): in a container PID 1's exit kills the service mid-drain; %s", who(o), x, ms(x.At), after.Probe, after.Said(), ms(after.At), ms(flip), fix))
}

// reacted says anything changed after the signal and before healthctl
// killed the process: readiness flipped, liveness failed, the process
// exited, a poll, the kept-alive connection or an in-flight request failed.
func reacted(o evidence.Observation, flip time.Duration, liveFailed bool) bool {
	x := o.Exit
	// Only what happened before healthctl killed the process counts.
	before := func(t time.Duration) bool { return t >= 0 && (!x.Killed || t < x.KilledAt) }
	if before(flip) || liveFailed || (x.Gone && !x.Killed) {
		return true
	}
	for _, p := range o.Polls {
		// A poll that failed because healthctl killed the process under it
		// is no reaction: judge it by when it ended.
		if p.At >= 0 && !p.Answered() && before(p.End()) {
			return true
		}
	}
	for _, e := range o.KeepAlive.Events {
		if before(e.At) {
			return true
		}
	}
	for _, q := range o.Inflight {
		if !q.OK() && before(q.End) {
			return true
		}
	}
	return false
}
