package manifest

// The Compose lint: each service's stop_grace_period, stop_signal and the
// command that must pass the signal on.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/shutdown"
)

func lintCompose(name string, root *yaml.Node, t Timing, res *LintResult) error {
	services := mapKey(root, "services")
	if services.Kind != yaml.MappingNode {
		return &ParseError{File: name, Line: services.Line, Msg: "services: want a map of services"}
	}
	for i := 0; i+1 < len(services.Content); i += 2 {
		key, node := services.Content[i], services.Content[i+1]
		var svc Service
		if err := node.Decode(&svc); err != nil {
			return parseError(name, err)
		}
		res.Checked = append(res.Checked, "service "+key.Value)
		ct, err := timingFrom(name, svc.Environment, t)
		if err != nil {
			return err
		}
		add := func(code string, line int, detail, fix string) {
			res.Findings = append(res.Findings, Finding{Name: code, File: name, Line: line, Resource: "service " + key.Value, Detail: detail, Fix: fix})
		}
		if f := svc.StopGracePeriod; f.Set {
			if _, err := composeDuration(f.V); err != nil {
				return &ParseError{File: name, Line: f.Line, Msg: fmt.Sprintf("service %s: stop_grace_period %q: %v", key.Value, f.V, err)}
			}
		}
		if !httpContract(svc, t) {
			res.NotJudged = append(res.NotJudged, "service "+key.Value+": no PRE_DRAIN_MS or SHUTDOWN_TIMEOUT_MS and no HTTP health check, so its shutdown timing is not held to HTTP drain defaults (its stop signal and command still are)")
			lintComposeSignals(svc, add)
			continue
		}
		P, S := ct.PreDrain, ct.ShutdownTimeout
		pS, sS := fmt.Sprintf("PRE_DRAIN_MS %d (%s)", P.Milliseconds(), ct.PreDrainSource), fmt.Sprintf("SHUTDOWN_TIMEOUT_MS %d (%s)", S.Milliseconds(), ct.ShutdownTimeoutSource)
		fixedS := fixedShutdown(P, S)
		if P >= S {
			add(PreDrainTooLong, key.Line, pS+" >= "+sS+": the force-exit fires before the drain ends",
				preDrainFix(fixedS))
		}
		grace, line, src := shutdown.DefaultStopGrace, key.Line, "default"
		if f := svc.StopGracePeriod; f.Set {
			d, err := composeDuration(f.V)
			if err != nil {
				return &ParseError{File: name, Line: f.Line, Msg: fmt.Sprintf("service %s: stop_grace_period %q: %v", key.Value, f.V, err)}
			}
			grace, line, src = d, f.Line, fmt.Sprintf("line %d", f.Line)
		}
		if want := fixedS + shutdown.Margin; grace < want {
			if fixedS != S {
				sS = fmt.Sprintf("SHUTDOWN_TIMEOUT_MS %d (as PRE_DRAIN_TOO_LONG's fix sets it)", fixedS.Milliseconds())
			}
			why := "Docker sends SIGKILL mid-drain"
			if f := svc.StopSignal; f.Set && cannotDrain(f.V) {
				// Both fixes together: once stop_signal is SIGTERM, this
				// grace is what the drain gets.
				why = fmt.Sprintf("once stop_signal is SIGTERM (STOP_SIGNAL_KILL, line %d), Docker sends SIGKILL mid-drain", f.Line)
			}
			add(StopGraceTooShort, line, fmt.Sprintf("stop_grace_period %s (%s) < %s + margin %s: %s", grace, src, sS, shutdown.Margin, why),
				fmt.Sprintf("stop_grace_period: %ds", shutdown.StopGraceSeconds(fixedS)))
		}
		lintComposeSignals(svc, add)
	}
	return nil
}

// httpContract says a Compose service has an HTTP shutdown contract to
// judge: PRE_DRAIN_MS or SHUTDOWN_TIMEOUT_MS in its environment, a health
// check that speaks HTTP, or P and S given on the command line (the user
// says what the file's services promise).
func httpContract(svc Service, t Timing) bool {
	return timingDeclared(svc.Environment, t) || httpCheck().MatchString(strings.Join(svc.Healthcheck.Test.Argv, " "))
}

// lintComposeSignals judges what reaches the service whatever it serves:
// a stop signal it can catch, and a command that passes it on.
func lintComposeSignals(svc Service, add func(code string, line int, detail, fix string)) {
	argv, wline, field := svc.Entrypoint.Argv, svc.Entrypoint.Line, "entrypoint (and no command)"
	if len(argv) == 0 {
		argv, wline, field = svc.Command.Argv, svc.Command.Line, "command"
	} else {
		argv = append(append([]string{}, argv...), svc.Command.Argv...)
	}
	srv, known := serverOf(argv, svc.Image)
	if f := svc.StopSignal; f.Set && cannotDrain(f.V) {
		fix := "stop_signal: SIGTERM (or remove it: SIGTERM is the default)"
		if known {
			fix = fmt.Sprintf("stop_signal: %s (%s)", srv.Signal, gracefulWhy(srv))
		}
		add(StopSignalKill, f.Line, fmt.Sprintf("stop_signal %s cannot be caught: Docker kills the service at once, nothing drains", f.V), fix)
	} else if f.Set && known && fastStop(srv, f.V) {
		add(StopSignalFast, f.Line, fmt.Sprintf("stop_signal %s is %s's fast shutdown, which cuts the requests in flight: its graceful stop is %s", f.V, srv.Name, srv.Signal),
			fmt.Sprintf("stop_signal: %s", srv.Signal))
	}
	if why, fix, bad := WrapperCheck(argv); bad {
		_, _, _, underInit := initOf(argv)
		if svc.Init.V {
			// Docker's init is tini without -g: the command is its
			// direct child.
			underInit = true
			why = "init: true runs it under Docker's init (tini without -g), which forwards the signal to its direct child only: " + why
		}
		fixText := wrapperFix(field, fix, underInit)
		if _, sup := supervisord(argv); sup {
			fixText = supervisordFix
		}
		if _, sup := supervisorOf(argv); sup {
			fixText = supervisorFix
		}
		add(SignalWrapper, wline, why, fixText)
	}
}

// composeDuration reads a Compose duration: "1m30s", "500ms", or bare seconds.
func composeDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(n * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}
