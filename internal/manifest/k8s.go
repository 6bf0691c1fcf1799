package manifest

// The Kubernetes lint: each container's preStop, grace period, probes and
// the command that must pass SIGTERM on.

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/shutdown"
)

func lintK8s(name string, root *yaml.Node, t Timing, res *LintResult) error {
	var obj k8sObject
	if err := root.Decode(&obj); err != nil {
		return parseError(name, err)
	}
	kind := obj.Kind.V
	var spec *PodSpec
	switch kind {
	case "List":
		for _, it := range obj.Items {
			if it.Kind == yaml.MappingNode {
				if err := lintK8s(name, &it, t, res); err != nil {
					return err
				}
			}
		}
		return nil
	case "Pod":
		spec = &PodSpec{}
		if err := obj.Spec.Decode(spec); err != nil {
			return parseError(name, err)
		}
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob":
		var h podTemplateHolder
		if err := obj.Spec.Decode(&h); err != nil {
			return parseError(name, err)
		}
		spec = h.Template.Spec
		if kind == "CronJob" {
			spec = h.JobTemplate.Spec.Template.Spec
		}
		if spec == nil {
			return &ParseError{File: name, Line: obj.Kind.Line, Msg: kind + " " + obj.Metadata.Name + ": no spec.template.spec"}
		}
	default:
		return nil
	}
	resource := kind + "/" + obj.Metadata.Name
	grace, graceLine := shutdown.DefaultTerminationGrace, obj.Kind.Line
	graceSrc := "default"
	if f := spec.TerminationGracePeriodSeconds; f.Set {
		grace, graceLine, graceSrc = time.Duration(f.V)*time.Second, f.Line, fmt.Sprintf("line %d", f.Line)
	}
	for _, c := range spec.Containers {
		res.Checked = append(res.Checked, resource+" container "+c.Name.V)
		env := Environment{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		ct, err := timingFrom(name, env, t)
		if err != nil {
			return err
		}
		f := Finding{File: name, Resource: resource, Container: c.Name.V}
		add := func(code string, line int, detail, fix string) {
			g := f
			g.Name, g.Line, g.Detail, g.Fix = code, line, detail, fix
			res.Findings = append(res.Findings, g)
		}
		if !k8sContract(c, env, t) {
			// A database, a queue, a worker: no HTTP or gRPC drain to
			// hold to HTTP defaults. What reaches it still counts.
			res.NotJudged = append(res.NotJudged, resource+" container "+c.Name.V+": no PRE_DRAIN_MS or SHUTDOWN_TIMEOUT_MS, and its probes speak neither HTTP nor gRPC, so its shutdown timing is not held to HTTP drain defaults (its command still is)")
			lintK8sCommand(c, add)
			continue
		}
		P, S := ct.PreDrain, ct.ShutdownTimeout
		pS, sS := fmt.Sprintf("PRE_DRAIN_MS %d (%s)", P.Milliseconds(), ct.PreDrainSource), fmt.Sprintf("SHUTDOWN_TIMEOUT_MS %d (%s)", S.Milliseconds(), ct.ShutdownTimeoutSource)
		// The fixes agree with each other: each is computed with the
		// values the others set (S after PRE_DRAIN_TOO_LONG's fix, the
		// preStop after PRESTOP_TOO_SHORT's).
		fixedS := fixedShutdown(P, S)
		if P >= S {
			add(PreDrainTooLong, c.Name.Line, pS+" >= "+sS+": the force-exit fires before the drain ends",
				preDrainFix(fixedS))
		}

		// preStop sleep >= P.
		preStop, psLine, psKnown, psWhat := time.Duration(0), c.Name.Line, true, "no preStop hook"
		if h := c.Lifecycle.PreStop; h != nil {
			switch {
			case h.Sleep != nil:
				preStop, psLine, psWhat = time.Duration(h.Sleep.Seconds.V)*time.Second, h.Sleep.Seconds.Line, fmt.Sprintf("preStop sleep %ds", h.Sleep.Seconds.V)
			case h.Exec != nil:
				psLine = h.Exec.Command.Line
				if d, ok := SleepOf(h.Exec.Command.V); ok {
					preStop, psWhat = d, fmt.Sprintf("preStop exec %q sleeps %s", h.Exec.Command.V, d)
				} else if _, stops := sleepThenHook(h.Exec.Command.V, 0); stops {
					// nginx -s quit, no sleep: the server stops
					// listening the moment the pod is deleted.
					psWhat = fmt.Sprintf("preStop exec %q stops the server with no sleep before it: 0s", h.Exec.Command.V)
				} else {
					psKnown, psWhat = false, fmt.Sprintf("preStop exec %q (no sleep found)", h.Exec.Command.V)
				}
			default:
				psKnown, psWhat = false, "preStop httpGet (duration unknown)"
			}
		}
		need := shutdown.PreStopSeconds(P)
		fixedPreStop := preStop
		// A Job's or CronJob's pod is not routed, nor is a sidecar that
		// serves nothing (one of several containers, with no ports, no
		// readiness probe and no PRE_DRAIN_MS: a log shipper): no
		// pre-drain to cover.
		_, declaresP := env["PRE_DRAIN_MS"]
		serves := len(spec.Containers) == 1 || len(c.Ports) > 0 || c.ReadinessProbe != nil || declaresP
		routed := kind != "Job" && kind != "CronJob" && serves
		if routed && psKnown && preStop < P && !selfDrains(env, t, P) {
			fixedPreStop = time.Duration(need) * time.Second
			fix := fmt.Sprintf("preStop sleep >= PRE_DRAIN_MS: lifecycle.preStop.sleep.seconds: %d (or exec: {command: [\"sleep\", \"%d\"]})", need, need)
			if h := c.Lifecycle.PreStop; h != nil && h.Exec != nil {
				if kept, ok := longerSleep(h.Exec.Command.V, need); ok {
					// sleep 2 && kill -QUIT 1: unicorn's and nginx's
					// graceful stop is in the hook; a bare sleep drops it.
					fix = fmt.Sprintf("preStop sleep >= PRE_DRAIN_MS, keeping the rest of the hook: exec: {command: %s}", kept)
				} else if kept, ok := sleepThenHook(h.Exec.Command.V, need); ok {
					// A bare sleep would drop the hook's graceful stop.
					fix = fmt.Sprintf("preStop sleep >= PRE_DRAIN_MS before the hook's graceful stop (keep it: a bare sleep drops it): exec: {command: %s}", kept)
				}
			}
			add(PrestopTooShort, psLine, fmt.Sprintf("%s < %s: the pod is still routed when the app stops serving", psWhat, pS), fix)
		}

		// terminationGracePeriodSeconds >= preStop + S + margin, with the
		// preStop and S the other fixes set.
		if want := fixedPreStop + fixedS + shutdown.Margin; grace < want {
			with := ""
			if fixedPreStop != preStop || fixedS != S {
				with = " (the preStop and SHUTDOWN_TIMEOUT_MS the other fixes set)"
			}
			if fixedS != S {
				sS = fmt.Sprintf("SHUTDOWN_TIMEOUT_MS %d", fixedS.Milliseconds())
			}
			add(GraceTooShort, graceLine, fmt.Sprintf("terminationGracePeriodSeconds %d (%s) < preStop %s + %s + margin %s = %s%s: SIGKILL comes mid-drain",
				int(grace.Seconds()), graceSrc, fixedPreStop, sS, shutdown.Margin, want, with),
				fmt.Sprintf("terminationGracePeriodSeconds: %d", shutdown.GraceSeconds(fixedPreStop, fixedS)))
		}
		if r, l := c.ReadinessProbe, c.LivenessProbe; r != nil && l != nil && r.HTTPGet != nil && l.HTTPGet != nil &&
			path.Clean("/"+r.HTTPGet.Path) == path.Clean("/"+l.HTTPGet.Path) && r.HTTPGet.Port == l.HTTPGet.Port {
			add(LivenessEqReadiness, l.line, fmt.Sprintf("liveness and readiness both probe %s on port %s: when readiness answers 503 to drain, liveness fails with it; %s", r.HTTPGet.Path, r.HTTPGet.Port, livenessWhoActs),
				"give liveness its own process-only endpoint that stays 200 during the drain")
		}
		if r, l := c.ReadinessProbe, c.LivenessProbe; r != nil && l != nil && r.GRPC != nil && l.GRPC != nil &&
			r.GRPC.Port == l.GRPC.Port && r.GRPC.Service == l.GRPC.Service {
			add(LivenessEqReadiness, l.line, fmt.Sprintf("liveness and readiness both ask the gRPC health of %s on port %s: when readiness answers NOT_SERVING to drain (grpc-go's health Shutdown() turns every service NOT_SERVING), liveness fails with it; %s", grpcServiceName(r.GRPC.Service), r.GRPC.Port, livenessWhoActs),
				"give liveness a check that stays up during the drain: tcpSocket on the port (Shutdown() turns every service NOT_SERVING, named ones too)")
		}
		if r, l := c.ReadinessProbe, c.LivenessProbe; r != nil && l != nil && r.Exec != nil && l.Exec != nil &&
			grpcExec(r.Exec.Command) && strings.Join(r.Exec.Command, "\x00") == strings.Join(l.Exec.Command, "\x00") {
			add(LivenessEqReadiness, l.line, fmt.Sprintf("liveness and readiness both run %q, a gRPC health check: when readiness answers NOT_SERVING to drain (grpc-go's health Shutdown() turns every service NOT_SERVING), liveness fails with it; %s", strings.Join(r.Exec.Command, " "), livenessWhoActs),
				"give liveness a check that stays up during the drain: tcpSocket on the port (Shutdown() turns every service NOT_SERVING, named ones too)")
		}
		srv, known := serverOf(append(append([]string{}, c.Command.V...), c.Args...), c.Image)
		if f := c.Lifecycle.StopSignal; f.Set && cannotDrain(f.V) {
			fix := "lifecycle.stopSignal: SIGTERM (or remove it: SIGTERM, or the image's STOPSIGNAL, is the default)"
			if known {
				fix = fmt.Sprintf("lifecycle.stopSignal: %s (%s)", srv.Signal, gracefulWhy(srv))
			}
			add(StopSignalKill, f.Line, fmt.Sprintf("lifecycle.stopSignal %s cannot be caught: the kubelet kills the container at once, nothing drains", f.V), fix)
		} else if f.Set && known && fastStop(srv, f.V) {
			add(StopSignalFast, f.Line, fmt.Sprintf("lifecycle.stopSignal %s is %s's fast shutdown, which cuts the requests in flight: its graceful stop is %s", f.V, srv.Name, srv.Signal),
				fmt.Sprintf("lifecycle.stopSignal: %s", srv.Signal))
		}
		lintK8sCommand(c, add)
	}
	return nil
}

// selfDrains says the app pre-drains itself for long enough: its env sets
// PRE_DRAIN_MS (it keeps serving that long after SIGTERM, the pre-drain a
// preStop sleep would otherwise give it), at least the P asked on the
// command line when one was. No preStop sleep is then needed.
func selfDrains(env Environment, t Timing, P time.Duration) bool {
	f, ok := env["PRE_DRAIN_MS"]
	if !ok || !f.Set || strings.Contains(f.V, "${") {
		return false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(f.V), 10, 64)
	if err != nil || n <= 0 {
		return false
	}
	need := P
	if t.PreDrainSource != "default" {
		need = t.PreDrain
	}
	return time.Duration(n)*time.Millisecond >= need
}

// livenessWhoActs says who acts on a liveness that fails with readiness,
// the same words for HTTP and gRPC probes.
const livenessWhoActs = "Kubernetes before it stopped liveness probes of terminating pods restarts the container mid-drain (as Docker autoheal, ECS, Nomad and Consul do), and current Kubernetes still restarts it for any failure outside termination"

// lintK8sCommand judges a container's command, whatever it serves: one
// that keeps SIGTERM from the service.
func lintK8sCommand(c Container, add func(code string, line int, detail, fix string)) {
	if !c.Command.Set {
		return
	}
	if why, fix, bad := WrapperCheck(append(append([]string{}, c.Command.V...), c.Args...)); bad {
		_, _, _, underInit := initOf(c.Command.V)
		fixText := wrapperFix("command", fix, underInit)
		if fix != nil && len(c.Args) > 0 {
			fixText = wrapperFix("command (and no args)", fix, underInit)
		}
		if _, sup := supervisord(append(append([]string{}, c.Command.V...), c.Args...)); sup {
			fixText = supervisordFix
		}
		if _, sup := supervisorOf(append(append([]string{}, c.Command.V...), c.Args...)); sup {
			fixText = supervisorFix
		}
		add(SignalWrapper, c.Command.Line, why, fixText)
	}
}

// k8sContract says a container has a shutdown contract to judge, as
// httpContract does for a Compose service: P and S on the command line,
// PRE_DRAIN_MS or SHUTDOWN_TIMEOUT_MS in its env, a readiness, liveness or
// startup probe that speaks HTTP or gRPC (httpGet, grpc, or an exec of
// curl, wget or healthctl) — or no probe at all: a container without probes
// says nothing of what it serves, and is judged as the HTTP service it most
// often is. Only probes that all speak something else (tcpSocket, exec
// pg_isready or redis-cli ping) say it is not one.
func k8sContract(c Container, env Environment, t Timing) bool {
	if timingDeclared(env, t) {
		return true
	}
	probes := 0
	for _, p := range []*ProbeSpec{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
		switch {
		case p == nil:
			continue
		case p.HTTPGet != nil, p.GRPC != nil:
			return true
		case p.Exec != nil && (httpCheck().MatchString(strings.Join(p.Exec.Command, " ")) || grpcExec(p.Exec.Command)):
			return true
		}
		probes++
	}
	return probes == 0
}

// grpcCheck matches an exec probe that asks gRPC health: grpc_health_probe
// (the standard pattern before the kubelet's grpc probe, Kubernetes 1.24)
// or healthctl probe grpc://.
var grpcCheck = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bgrpc_health_probe\b|\bgrpcs?://`)
})

// grpcExec says an exec probe's command is a gRPC health check.
func grpcExec(argv []string) bool { return grpcCheck().MatchString(strings.Join(argv, " ")) }

// grpcServiceName names a grpc probe's service for a finding.
func grpcServiceName(s string) string {
	if s == "" {
		return "the server (service \"\")"
	}
	return fmt.Sprintf("service %q", s)
}
