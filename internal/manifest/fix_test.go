package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestFixesAreConsistent applies every suggested fix to each manifest and
// lints it again: the fixes agree with each other, so no finding is left.
func TestFixesAreConsistent(t *testing.T) {
	for name, y := range map[string]string{
		// The example: the preStop fix (5) raises the grace needed
		// (5 + 30 + 1 = 36), and the grace fix says so.
		"preStop 2, P 5000, S 30000": `kind: Deployment
metadata: {name: api}
spec:
  template:
    spec:
      containers:
        - name: app
          ports: [{containerPort: 8080}]
          env:
            - {name: PRE_DRAIN_MS, value: "5000"}
            - {name: SHUTDOWN_TIMEOUT_MS, value: "30000"}
          lifecycle: {preStop: {exec: {command: ["sleep", "2"]}}}
`,
		"P >= S, no preStop, wrapper with args, liveness = readiness, two containers": `kind: StatefulSet
metadata: {name: db}
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 10
      containers:
        - name: app
          command: ["/bin/sh", "-ec"]
          args: ["cd /app && ./migrate\npython3 app.py\necho exited"]
          env:
            - {name: PRE_DRAIN_MS, value: "31000"}
            - {name: SHUTDOWN_TIMEOUT_MS, value: "30000"}
          readinessProbe: {httpGet: {path: /health, port: 8080}}
          livenessProbe: {httpGet: {path: /health, port: 8080}}
        - name: proxy
          ports: [{containerPort: 443}]
          command: ["npm", "start"]
`,
		"P 800 with default readiness timing, grace 1": `kind: Deployment
metadata: {name: fast}
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: app
          env: [{name: PRE_DRAIN_MS, value: "800"}]
          readinessProbe: {httpGet: {path: /ready, port: 80}}
          lifecycle: {preStop: {sleep: {seconds: 1}}}
`,
		// The graceful signals: nginx's QUIT, httpd's WINCH; the preStop
		// fix keeps the hook's nginx -s quit behind its sleep.
		"nginx and httpd stop signals": `services:
  web:
    image: nginx:1.27
    stop_signal: SIGKILL
    stop_grace_period: 30s
    environment: {PRE_DRAIN_MS: "5000", SHUTDOWN_TIMEOUT_MS: "20000"}
  httpd:
    command: httpd-foreground
    stop_signal: SIGTERM
    stop_grace_period: 30s
    environment: {PRE_DRAIN_MS: "5000", SHUTDOWN_TIMEOUT_MS: "20000"}
`,
		"compose supervisord behind tini -g": `services:
  app:
    command: [tini, -g, --, supervisord, -n, -c, /etc/supervisord.conf]
    stop_grace_period: 30s
    environment: {PRE_DRAIN_MS: "5000", SHUTDOWN_TIMEOUT_MS: "20000"}
`,
		"compose runsvdir, pm2-runtime, catatonit -g, thin SIGINT": `services:
  runit:
    command: [runsvdir, -P, /etc/service]
    stop_grace_period: 30s
    environment: {PRE_DRAIN_MS: "5000", SHUTDOWN_TIMEOUT_MS: "20000"}
  pm2:
    command: [pm2-runtime, ecosystem.config.js]
    stop_grace_period: 30s
    environment: {PRE_DRAIN_MS: "5000", SHUTDOWN_TIMEOUT_MS: "20000"}
  podman:
    entrypoint: [catatonit, -g, --]
    command: sh -c '/app/server'
    stop_grace_period: 30s
    environment: {PRE_DRAIN_MS: "5000", SHUTDOWN_TIMEOUT_MS: "20000"}
  thin:
    command: [thin, start]
    stop_signal: SIGINT
    stop_grace_period: 30s
    environment: {PRE_DRAIN_MS: "5000", SHUTDOWN_TIMEOUT_MS: "20000"}
`,
		"kubernetes nginx stopSignal SIGTERM, preStop nginx -s quit": `kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
        - name: web
          command: [nginx, -g, 'daemon off;']
          ports: [{containerPort: 80}]
          readinessProbe: {httpGet: {path: /ready, port: 80}}
          lifecycle: {preStop: {exec: {command: [nginx, -s, quit]}}, stopSignal: SIGTERM}
`,
		"compose": `services:
  api:
    image: api
    command: sh -c 'node server.js; echo bye'
    stop_signal: SIGKILL
    stop_grace_period: 3s
  worker:
    image: w
    entrypoint: ["/bin/bash", "-c"]
    command: ["./prepare && exec ./work"]
    environment: [PRE_DRAIN_MS=20000, SHUTDOWN_TIMEOUT_MS=20000]
    stop_grace_period: 30s
  web:
    image: web
    command: yarn start
`,
		"compose wrappers behind inits": `services:
  a:
    init: true
    environment: [PRE_DRAIN_MS=1000]
    stop_grace_period: 30s
    command: sh -c "cd /app && node server.js"
  b:
    entrypoint: [tini, --]
    command: sh -c 'node server.js'
    environment: [PRE_DRAIN_MS=1000]
    stop_grace_period: 30s
  c:
    entrypoint: [dumb-init, --single-child, --, sh, -c, "node server.js"]
    environment: [PRE_DRAIN_MS=1000]
    stop_grace_period: 30s
  d:
    command: [tini, --, npm, start]
    environment: [PRE_DRAIN_MS=1000]
    stop_grace_period: 30s
`,
		"kubernetes tini -- sh -c": `kind: Deployment
metadata: {name: t}
spec:
  template:
    spec:
      containers:
        - name: app
          command: ["tini", "--"]
          args: ["sh", "-c", "node server.js"]
          env: [{name: PRE_DRAIN_MS, value: "1000"}]
          lifecycle: {preStop: {sleep: {seconds: 1}}}
`,
	} {
		t.Run(name, func(t *testing.T) {
			res, err := Lint("m.yaml", []byte(y), defaults)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Findings) == 0 {
				t.Fatal("no findings to fix")
			}
			for _, f := range res.Findings {
				t.Logf("%s line %d: fix: %s", f.Name, f.Line, f.Fix)
			}
			fixed := applyFixes(t, []byte(y), res.Findings)
			res2, err := Lint("m.yaml", fixed, defaults)
			if err != nil {
				t.Fatalf("%v\n%s", err, fixed)
			}
			for _, f := range res2.Findings {
				t.Errorf("after every fix: %s line %d: %s (fix: %s)", f.Name, f.Line, f.Detail, f.Fix)
			}
			if t.Failed() {
				t.Logf("fixed manifest:\n%s", fixed)
			}
		})
	}
}

var (
	intFix  = regexp.MustCompile(`(lifecycle\.preStop\.sleep\.seconds|terminationGracePeriodSeconds|SHUTDOWN_TIMEOUT_MS|stop_grace_period): (\d+)`)
	execFix = regexp.MustCompile(`exec: \{command: (\[.*\])\}$`) // a kept hook; the plain fix ends "…})"
	sigFix  = regexp.MustCompile(`^(stop_signal|lifecycle\.stopSignal): (SIG[A-Z]+)`)
	argvFix = regexp.MustCompile(`^(command|entrypoint)[^:]*: (\[.*?\]) —`)
)

// applyFixes edits the manifest as each finding's fix says.
func applyFixes(t *testing.T, data []byte, findings []Finding) []byte {
	t.Helper()
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var d yaml.Node
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, &d)
	}
	for _, f := range findings {
		target := findTarget(t, docs, f)
		n := 0
		if m := intFix.FindStringSubmatch(f.Fix); m != nil {
			n, _ = strconv.Atoi(m[2])
		}
		switch f.Name {
		case PrestopTooShort:
			hook := node(map[string]any{"sleep": map[string]any{"seconds": n}})
			if m := execFix.FindStringSubmatch(f.Fix); m != nil {
				// The hook kept (its graceful stop behind the sleep).
				var argv []string
				if err := json.Unmarshal([]byte(m[1]), &argv); err != nil {
					t.Fatalf("%s fix %q: %v", f.Name, f.Fix, err)
				}
				hook = node(map[string]any{"exec": map[string]any{"command": argv}})
			}
			if mapKey(target.container, "lifecycle") == nil {
				setKey(target.container, "lifecycle", node(map[string]any{}))
			}
			setKey(mapKey(target.container, "lifecycle"), "preStop", hook)
		case GraceTooShort:
			if old := mapKey(target.pod, "terminationGracePeriodSeconds"); old != nil {
				if o, _ := strconv.Atoi(old.Value); o > n {
					n = o // another container's fix asked for more
				}
			}
			setKey(target.pod, "terminationGracePeriodSeconds", node(n))
		case StopGraceTooShort:
			setKey(target.container, "stop_grace_period", node(strconv.Itoa(n)+"s"))
		case StopSignalKill, StopSignalFast:
			m := sigFix.FindStringSubmatch(f.Fix)
			if m == nil {
				t.Fatalf("%s: no signal in fix %q", f.Name, f.Fix)
			}
			if m[1] == "lifecycle.stopSignal" {
				setKey(mapKey(target.container, "lifecycle"), "stopSignal", node(m[2]))
			} else {
				setKey(target.container, "stop_signal", node(m[2]))
			}
		case PreDrainTooLong:
			setEnv(target.container, "SHUTDOWN_TIMEOUT_MS", strconv.Itoa(n))
		case LivenessEqReadiness:
			setKey(mapKey(mapKey(target.container, "livenessProbe"), "httpGet"), "path", node("/livez"))
		case SignalWrapper:
			key, argv := "command", []string{"node", "server.js"} // npm/yarn: what the start script runs
			if m := argvFix.FindStringSubmatch(f.Fix); m != nil {
				key = m[1]
				if err := json.Unmarshal([]byte(m[2]), &argv); err != nil {
					t.Fatalf("%s fix %q: %v", f.Name, f.Fix, err)
				}
			} else if !strings.Contains(f.Fix, `["node", "server.js"]`) {
				t.Fatalf("%s: no command in fix %q", f.Name, f.Fix)
			}
			setKey(target.container, key, node(argv))
			if strings.Contains(f.Fix, "(and no args)") {
				delKey(target.container, "args")
			}
			if strings.Contains(f.Fix, "(and no command)") {
				delKey(target.container, "command")
			}
		default:
			t.Fatalf("no way to apply %s's fix %q", f.Name, f.Fix)
		}
	}
	var out bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			out.WriteString("---\n")
		}
		b, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	return out.Bytes()
}

type fixTarget struct{ pod, container *yaml.Node }

// findTarget finds the pod spec and container (Kubernetes) or the service
// (Compose, as container) a finding is about.
func findTarget(t *testing.T, docs []*yaml.Node, f Finding) fixTarget {
	t.Helper()
	for _, d := range docs {
		root := d.Content[0]
		if svc, ok := strings.CutPrefix(f.Resource, "service "); ok {
			if s := mapKey(mapKey(root, "services"), svc); s != nil {
				return fixTarget{container: s}
			}
			continue
		}
		kind, name, _ := strings.Cut(f.Resource, "/")
		if mapKey(root, "kind").Value != kind || mapKey(mapKey(root, "metadata"), "name").Value != name {
			continue
		}
		spec := mapKey(root, "spec")
		pod := mapKey(mapKey(spec, "template"), "spec")
		if kind == "Pod" {
			pod = spec
		}
		for _, c := range mapKey(pod, "containers").Content {
			if mapKey(c, "name").Value == f.Container {
				return fixTarget{pod: pod, container: c}
			}
		}
	}
	t.Fatalf("finding %s: %s not found", f.Name, f.Resource)
	return fixTarget{}
}

func node(v any) *yaml.Node {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		panic(err)
	}
	return &n
}

func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, node(key), v)
}

func delKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// setEnv sets an environment variable in a container's env list or a
// Compose service's environment (list or map).
func setEnv(c *yaml.Node, name, value string) {
	if env := mapKey(c, "env"); env != nil {
		for _, e := range env.Content {
			if mapKey(e, "name").Value == name {
				setKey(e, "value", node(value))
				return
			}
		}
		env.Content = append(env.Content, node(map[string]string{"name": name, "value": value}))
		return
	}
	env := mapKey(c, "environment")
	switch {
	case env == nil:
		setKey(c, "environment", node(map[string]string{name: value}))
	case env.Kind == yaml.MappingNode:
		setKey(env, name, node(value))
	default:
		for i, e := range env.Content {
			if strings.HasPrefix(e.Value, name+"=") {
				env.Content[i] = node(name + "=" + value)
				return
			}
		}
		env.Content = append(env.Content, node(name+"="+value))
	}
}
