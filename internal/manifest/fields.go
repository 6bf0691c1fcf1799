package manifest

// The YAML the lint reads: a value with its line, and the few Kubernetes
// and Compose fields that decide a shutdown.

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

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
