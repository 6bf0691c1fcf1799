// Package manifest lints a Kubernetes manifest's or a Compose file's
// shutdown timing without running anything: it reads the few fields that
// decide a shutdown, checks them against the service's pre-drain (P) and
// shutdown timeout (S), and suggests fixes that agree with each other.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/shutdown"
)

// The lint's finding names, as drain-test prints them and its JSON carries them.
const (
	PrestopTooShort     = "PRESTOP_TOO_SHORT"
	GraceTooShort       = "GRACE_TOO_SHORT"
	LivenessEqReadiness = "LIVENESS_EQ_READINESS"
	StopGraceTooShort   = "STOP_GRACE_TOO_SHORT"
	SignalWrapper       = "SIGNAL_WRAPPER"
	StopSignalKill      = "STOP_SIGNAL_KILL"
	StopSignalFast      = "STOP_SIGNAL_FAST"
	PreDrainTooLong     = "PRE_DRAIN_TOO_LONG"
)

// Timing is a service's P and S and where each came from ("--pre-drain",
// "default", "env PRE_DRAIN_MS line 12").
type Timing struct {
	PreDrain, ShutdownTimeout             time.Duration
	PreDrainSource, ShutdownTimeoutSource string
}

// Finding is one lint failure.
type Finding struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line int    `json:"line"`
	// Resource is "Deployment/api" or "service api".
	Resource  string `json:"resource"`
	Container string `json:"container,omitempty"`
	Detail    string `json:"detail"`
	Fix       string `json:"fix"`
}

// ParseError is a manifest that cannot be read: exit 2, naming file and line.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// LintResult is what Lint found.
type LintResult struct {
	// Checked lists the containers and services whose timing was checked.
	Checked  []string
	Findings []Finding
	// NotJudged lists the services whose shutdown timing was not judged,
	// each with why: the file gives them no HTTP shutdown contract (a
	// database, a dev server), so HTTP drain defaults do not apply.
	NotJudged []string
}

// Field is a YAML value with the line it was written on; Set says it was
// present at all.
type Field[T any] struct {
	V    T
	Line int
	Set  bool
}

// UnmarshalYAML keeps the node's line.
func (f *Field[T]) UnmarshalYAML(n *yaml.Node) error {
	f.Line, f.Set = n.Line, true
	return n.Decode(&f.V)
}

// The few Kubernetes API fields the lint reads, named as in the API.
type (
	k8sObject struct {
		APIVersion string                `yaml:"apiVersion"`
		Kind       Field[string]         `yaml:"kind"`
		Metadata   struct{ Name string } `yaml:"metadata"`
		Spec       yaml.Node             `yaml:"spec"`
		Items      []yaml.Node           `yaml:"items"`
	}
	podTemplateHolder struct {
		Template struct {
			Spec *PodSpec `yaml:"spec"`
		} `yaml:"template"`
		JobTemplate struct {
			Spec struct {
				Template struct {
					Spec *PodSpec `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"jobTemplate"`
	}
	// PodSpec is the part of a pod's spec that decides its shutdown.
	PodSpec struct {
		TerminationGracePeriodSeconds Field[int64] `yaml:"terminationGracePeriodSeconds"`
		Containers                    []Container  `yaml:"containers"`
	}
	// Container is one container of a pod.
	Container struct {
		Name      Field[string]   `yaml:"name"`
		Image     string          `yaml:"image"`
		Ports     []yaml.Node     `yaml:"ports"`
		Command   Field[[]string] `yaml:"command"`
		Args      []string        `yaml:"args"`
		Env       []EnvVar        `yaml:"env"`
		Lifecycle struct {
			PreStop *LifecycleHandler `yaml:"preStop"`
			// StopSignal is Kubernetes 1.33's lifecycle.stopSignal.
			StopSignal Field[string] `yaml:"stopSignal"`
		} `yaml:"lifecycle"`
		ReadinessProbe *ProbeSpec `yaml:"readinessProbe"`
		LivenessProbe  *ProbeSpec `yaml:"livenessProbe"`
		StartupProbe   *ProbeSpec `yaml:"startupProbe"`
	}
	// EnvVar is a container's environment entry (valueFrom is not read).
	EnvVar struct {
		Name  string        `yaml:"name"`
		Value Field[string] `yaml:"value"`
	}
	// LifecycleHandler is a preStop hook.
	LifecycleHandler struct {
		Exec    *struct{ Command Field[[]string] } `yaml:"exec"`
		Sleep   *struct{ Seconds Field[int64] }    `yaml:"sleep"`
		HTTPGet *HTTPGetAction                     `yaml:"httpGet"`
	}
	// ProbeSpec is a readiness or liveness probe.
	ProbeSpec struct {
		HTTPGet *HTTPGetAction `yaml:"httpGet"`
		// GRPC is the kubelet's grpc.health.v1 probe (port, service).
		GRPC *GRPCAction `yaml:"grpc"`
		// TCPSocket is a connect to the port.
		TCPSocket *struct{ Port string } `yaml:"tcpSocket"`
		// Exec is a command run in the container (curl, wget or
		// healthctl in it make it an HTTP check).
		Exec             *struct{ Command []string } `yaml:"exec"`
		PeriodSeconds    Field[int64]                `yaml:"periodSeconds"`
		FailureThreshold Field[int64]                `yaml:"failureThreshold"`
		TimeoutSeconds   Field[int64]                `yaml:"timeoutSeconds"`
		line             int
	}
	// GRPCAction is a grpc probe: the port and the service asked about
	// ("" is the server's overall health).
	GRPCAction struct {
		Port    string `yaml:"port"`
		Service string `yaml:"service"`
	}
	// HTTPGetAction is an httpGet probe or hook.
	HTTPGetAction struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	}
)

// UnmarshalYAML keeps the probe's line.
func (p *ProbeSpec) UnmarshalYAML(n *yaml.Node) error {
	type plain ProbeSpec
	if err := n.Decode((*plain)(p)); err != nil {
		return err
	}
	p.line = n.Line
	return nil
}

// The few Compose fields the lint reads, named as in the Compose spec.
type (
	// Service is one Compose service.
	Service struct {
		Image           string        `yaml:"image"`
		Command         Words         `yaml:"command"`
		Entrypoint      Words         `yaml:"entrypoint"`
		StopGracePeriod Field[string] `yaml:"stop_grace_period"`
		StopSignal      Field[string] `yaml:"stop_signal"`
		Environment     Environment   `yaml:"environment"`
		Init            Field[bool]   `yaml:"init"`
		Healthcheck     struct {
			Test Words `yaml:"test"`
		} `yaml:"healthcheck"`
	}
	// Words is a command: a string (split as Compose splits it, shell-style
	// words, no shell) or a list.
	Words struct {
		Argv []string
		Line int
	}
	// Environment is a service's environment, list or map form.
	Environment map[string]Field[string]
)

// UnmarshalYAML reads either form of a command.
func (w *Words) UnmarshalYAML(n *yaml.Node) error {
	w.Line = n.Line
	if n.Kind == yaml.ScalarNode {
		if n.Tag == "!!null" {
			return nil
		}
		argv, err := SplitWords(n.Value)
		if err != nil {
			return err
		}
		w.Argv = argv
		return nil
	}
	return n.Decode(&w.Argv)
}

// UnmarshalYAML reads `- KEY=value` lists and `KEY: value` maps.
func (e *Environment) UnmarshalYAML(n *yaml.Node) error {
	*e = Environment{}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			k, v, _ := strings.Cut(c.Value, "=")
			(*e)[k] = Field[string]{V: v, Line: c.Line, Set: true}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			(*e)[k.Value] = Field[string]{V: v.Value, Line: v.Line, Set: v.Tag != "!!null"}
		}
	default:
		return fmt.Errorf("line %d: environment: want a list or a map", n.Line)
	}
	return nil
}

// Lint checks a manifest's shutdown timing: P < S; for
// Kubernetes preStop sleep >= P, terminationGracePeriodSeconds >= preStop +
// S + shutdown.Margin, readiness detected within P, liveness not on readiness's
// endpoint; for Compose stop_grace_period >= S + shutdown.Margin; and no shell in
// front of the service that keeps the signal from it.
// It is pure: data is the file's content, name is used in findings. P and S
// come from each container's (service's) PRE_DRAIN_MS / SHUTDOWN_TIMEOUT_MS,
// else from t. A file that cannot be read is a *ParseError.
func Lint(name string, data []byte, t Timing) (LintResult, error) {
	var res LintResult
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return res, syntaxError(name, data, err)
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		root := doc.Content[0]
		switch {
		case mapKey(root, "kind") != nil:
			if err := lintK8s(name, root, t, &res); err != nil {
				return res, err
			}
		case mapKey(root, "services") != nil:
			if err := lintCompose(name, root, t, &res); err != nil {
				return res, err
			}
		}
	}
	if len(res.Checked) == 0 {
		return res, &ParseError{File: name, Msg: "no Kubernetes workload (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod or a List of them) and no Compose services found"}
	}
	sort.SliceStable(res.Findings, func(i, j int) bool { return res.Findings[i].Line < res.Findings[j].Line })
	return res, nil
}

// Compiled on first use (as sleepRe): package initialisation is paid by
// every start, probe included.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

func parseError(name string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimSpace(strings.Replace(strings.Replace(msg, m[0]+":", "", 1), m[0], "", 1))
	}
	msg = strings.TrimPrefix(msg, "unmarshal errors: ")
	return &ParseError{File: name, Line: line, Msg: oneLine(msg)}
}

// syntaxError is parseError for a YAML syntax error, with the line where
// the file stops being YAML: the parser reports the line of the mapping
// the error is in (an indentation error on line 11 as line 8), and none at
// all for some (a tab on line 1). The first prefix of the file, in whole
// lines, that fails with the same message ends on the line at fault.
func syntaxError(name string, data []byte, err error) error {
	pe, ok := parseError(name, err).(*ParseError)
	if !ok {
		return parseError(name, err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 2000 {
		return pe // not worth the parses
	}
	n := 0
	for i := range lines {
		n += len(lines[i])
		perr := decodeAll(data[:n])
		if perr == nil {
			continue
		}
		if p, ok := parseError(name, perr).(*ParseError); ok && p.Msg == pe.Msg {
			pe.Line = i + 1
		}
		break
	}
	return pe
}

// decodeAll parses every document of data, for syntax errors only.
func decodeAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func mapKey(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

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

// fixedShutdown is S as the fixes leave it: unchanged when P < S, else
// P plus 5s of room for the real drain.
func fixedShutdown(P, S time.Duration) time.Duration {
	if P < S {
		return S
	}
	return P + 5*time.Second
}

func preDrainFix(fixedS time.Duration) string {
	return fmt.Sprintf("PRE_DRAIN_MS < SHUTDOWN_TIMEOUT_MS, with room for the real drain: SHUTDOWN_TIMEOUT_MS: %d", fixedS.Milliseconds())
}

// cannotDrain says a stop signal cannot be handled: SIGKILL, SIGSTOP.
func cannotDrain(sig string) bool {
	switch strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(sig)), "SIG") {
	case "KILL", "9", "STOP", "19":
		return true
	}
	return false
}

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

// timingDeclared says P or S is given for a service or container: on the
// command line, or as PRE_DRAIN_MS or SHUTDOWN_TIMEOUT_MS in its
// environment.
func timingDeclared(env Environment, t Timing) bool {
	if t.PreDrainSource != "default" || t.ShutdownTimeoutSource != "default" {
		return true
	}
	_, p := env["PRE_DRAIN_MS"]
	_, s := env["SHUTDOWN_TIMEOUT_MS"]
	return p || s
}

// httpCheck finds an HTTP health check: a URL, or curl, wget, healthctl.
// Compiled when first used: not at start-up, which every probe pays.
var httpCheck = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)https?://|\b(curl|wget|healthctl)\b`) })

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

// timingFrom reads PRE_DRAIN_MS and SHUTDOWN_TIMEOUT_MS from env, falling
// back to t.
func timingFrom(file string, env Environment, t Timing) (Timing, error) {
	for _, v := range []struct {
		name string
		d    *time.Duration
		src  *string
	}{{"PRE_DRAIN_MS", &t.PreDrain, &t.PreDrainSource}, {"SHUTDOWN_TIMEOUT_MS", &t.ShutdownTimeout, &t.ShutdownTimeoutSource}} {
		f, ok := env[v.name]
		if !ok || !f.Set {
			continue
		}
		if strings.Contains(f.V, "${") {
			continue // interpolated at deploy time: use the flag's value
		}
		n, err := strconv.ParseInt(strings.TrimSpace(f.V), 10, 64)
		if err != nil || n < 0 {
			return t, &ParseError{File: file, Line: f.Line, Msg: fmt.Sprintf("%s=%q: want a number of milliseconds", v.name, f.V)}
		}
		*v.d, *v.src = time.Duration(n)*time.Millisecond, fmt.Sprintf("env, line %d", f.Line)
	}
	return t, nil
}

// composeDuration reads a Compose duration: "1m30s", "500ms", or bare seconds.
func composeDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(n * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}

// sleepRe finds `sleep N` in a shell script.
var sleepRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[;&|(\s])sleep\s+([0-9.]+[smh]?)\b`)
})

// longerSleep is a shell preStop command that does more than sleep (sh -c
// 'sleep 2 && kill -QUIT 1') with its sleep set to need seconds, as a YAML
// flow list; ok is false for a command that only sleeps.
func longerSleep(argv []string, need int) (string, bool) {
	if len(argv) < 3 || !shells[path.Base(argv[0])] || argv[1] != "-c" {
		return "", false
	}
	loc := sleepRe().FindStringSubmatchIndex(argv[2])
	if loc == nil {
		return "", false
	}
	script := argv[2][:loc[2]] + strconv.Itoa(need) + argv[2][loc[3]:]
	if strings.TrimSpace(sleepRe().ReplaceAllString(script, "")) == "" {
		return "", false // only a sleep: the plain fix says it
	}
	out := append(append([]string{}, argv[:2]...), script)
	out = append(out, argv[3:]...)
	q := make([]string, len(out))
	for i, w := range out {
		q[i] = strconv.Quote(w)
	}
	return "[" + strings.Join(q, ", ") + "]", true
}

// SleepOf returns how long a preStop exec command sleeps: ["sleep", "5"],
// ["/bin/sleep", "5s"], ["sh", "-c", "sleep 5"].
func SleepOf(argv []string) (time.Duration, bool) {
	if len(argv) >= 2 && path.Base(argv[0]) == "sleep" {
		return sleepArg(argv[1])
	}
	if len(argv) >= 3 && shells[path.Base(argv[0])] && argv[1] == "-c" {
		if m := sleepRe().FindStringSubmatch(argv[2]); m != nil {
			return sleepArg(m[1])
		}
	}
	return 0, false
}

func sleepArg(s string) (time.Duration, bool) {
	unit := time.Second
	switch {
	case strings.HasSuffix(s, "s"):
		s = strings.TrimSuffix(s, "s")
	case strings.HasSuffix(s, "m"):
		s, unit = strings.TrimSuffix(s, "m"), time.Minute
	case strings.HasSuffix(s, "h"):
		s, unit = strings.TrimSuffix(s, "h"), time.Hour
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n * float64(unit)), true
}

// SplitWords splits a command line into words the way Compose and
// drain-test's --exec do: whitespace separates, single and double quotes
// group, backslash escapes; no variables, globs or operators (no shell).
func SplitWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool
		quote rune
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]):
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
