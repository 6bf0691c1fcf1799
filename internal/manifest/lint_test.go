package manifest

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

var defaults = Timing{PreDrain: 5 * time.Second, ShutdownTimeout: 20 * time.Second, PreDrainSource: "default", ShutdownTimeoutSource: "default"}

const goodDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 30
      containers:
        - name: app
          command: ["node", "server.js"]
          env:
            - name: PRE_DRAIN_MS
              value: "5000"
            - name: SHUTDOWN_TIMEOUT_MS
              value: "20000"
          lifecycle:
            preStop:
              sleep:
                seconds: 5
          readinessProbe:
            httpGet: {path: /readiness, port: 8080}
            periodSeconds: 1
            failureThreshold: 2
            timeoutSeconds: 1
          livenessProbe:
            httpGet: {path: /healthcheck, port: 8080}
`

// noSelfDrain is goodDeployment without PRE_DRAIN_MS in its env: an app
// that does not pre-drain itself needs the preStop sleep (lines after the
// env 2 earlier).
var noSelfDrain = strings.Replace(goodDeployment, "            - name: PRE_DRAIN_MS\n              value: \"5000\"\n", "", 1)

func TestLint(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // "CODE@line"
	}{
		{"good deployment", goodDeployment, nil},
		{"preStop exec sleep 2", strings.Replace(noSelfDrain, "sleep:\n                seconds: 5", `exec: {command: ["sleep", "2"]}`, 1), []string{"PRESTOP_TOO_SHORT@17"}},
		{"app pre-drains itself: no preStop needed", strings.Replace(goodDeployment, "sleep:\n                seconds: 5", `exec: {command: ["sleep", "2"]}`, 1), nil},
		{"preStop sh -c sleep 2", strings.Replace(noSelfDrain, "sleep:\n                seconds: 5", `exec: {command: ["/bin/sh", "-c", "sleep 2"]}`, 1), []string{"PRESTOP_TOO_SHORT@17"}},
		{"native sleep 2", strings.Replace(noSelfDrain, "seconds: 5", "seconds: 2", 1), []string{"PRESTOP_TOO_SHORT@18"}},
		{"no preStop", strings.Replace(noSelfDrain, "          lifecycle:\n            preStop:\n              sleep:\n                seconds: 5\n", "", 1), []string{"PRESTOP_TOO_SHORT@10"}},
		{"grace 25", strings.Replace(goodDeployment, "GracePeriodSeconds: 30", "GracePeriodSeconds: 25", 1), []string{"GRACE_TOO_SHORT@8"}},
		{"default grace", strings.Replace(goodDeployment, "      terminationGracePeriodSeconds: 30\n", "", 1), nil},
		{"default grace, S 30s", strings.Replace(strings.Replace(goodDeployment, "      terminationGracePeriodSeconds: 30\n", "", 1), `"20000"`, `"25000"`, 1), []string{"GRACE_TOO_SHORT@2"}},
		// Kubernetes removes a terminating pod from its EndpointSlices on
		// deletion, not after readiness failures: no finding.
		{"default readiness timing", strings.Replace(goodDeployment, "periodSeconds: 1", "periodSeconds: 10", 1), nil},
		{"liveness = readiness", strings.Replace(goodDeployment, "/healthcheck", "/readiness", 1), []string{"LIVENESS_EQ_READINESS@27"}},
		{"grpc readiness, tcpSocket liveness", strings.Replace(strings.Replace(goodDeployment, "httpGet: {path: /readiness, port: 8080}", "grpc: {port: 8080}", 1), "httpGet: {path: /healthcheck, port: 8080}", "tcpSocket: {port: 8080}", 1), nil},
		{"grpc liveness = readiness", strings.Replace(strings.Replace(goodDeployment, "httpGet: {path: /readiness, port: 8080}", "grpc: {port: 8080}", 1), "httpGet: {path: /healthcheck, port: 8080}", "grpc: {port: 8080}", 1), []string{"LIVENESS_EQ_READINESS@27"}},
		{"grpc liveness on another service", strings.Replace(strings.Replace(goodDeployment, "httpGet: {path: /readiness, port: 8080}", "grpc: {port: 8080}", 1), "httpGet: {path: /healthcheck, port: 8080}", "grpc: {port: 8080, service: liveness}", 1), nil},
		{"grpc probes, preStop too short", strings.Replace(strings.Replace(noSelfDrain, "httpGet: {path: /readiness, port: 8080}", "grpc: {port: 8080}", 1), "seconds: 5", "seconds: 2", 1), []string{"PRESTOP_TOO_SHORT@18"}},
		{"shell wrapper", strings.Replace(goodDeployment, `["node", "server.js"]`, `["sh", "-c", "node server.js; echo bye"]`, 1), []string{"SIGNAL_WRAPPER@11"}},
		{"exec in shell is fine", strings.Replace(goodDeployment, `["node", "server.js"]`, `["sh", "-c", "exec node server.js"]`, 1), nil},
		{"pre-drain too long", strings.Replace(goodDeployment, `"5000"`, `"20000"`, 1), []string{"GRACE_TOO_SHORT@8", "PRE_DRAIN_TOO_LONG@10"}},
		{"preStop fix raises the grace needed", strings.Replace(strings.Replace(noSelfDrain, "seconds: 5", "seconds: 2", 1), `"20000"`, `"25000"`, 1), []string{"GRACE_TOO_SHORT@8", "PRESTOP_TOO_SHORT@18"}},
		{"CronJob: no preStop needed", "kind: CronJob\nmetadata: {name: c}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: job, command: [\"./run\"]}]\n", nil},
		{"sidecar without ports: no preStop needed", strings.Replace(goodDeployment, "      containers:\n", "      containers:\n        - name: logs\n          image: fluent-bit\n", 1), nil},
		{"lone container without ports or probes is the service", "kind: Deployment\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          command: [\"./app\"]\n", []string{"PRESTOP_TOO_SHORT@7"}},
		{"sidecar that declares PRE_DRAIN_MS pre-drains itself", strings.Replace(goodDeployment, "      containers:\n", "      containers:\n        - name: proxy\n          env: [{name: PRE_DRAIN_MS, value: \"5000\"}]\n", 1), nil},
		{"routed container without preStop", strings.Replace(goodDeployment, "      containers:\n", "      containers:\n        - name: web\n          ports: [{containerPort: 80}]\n", 1), []string{"PRESTOP_TOO_SHORT@10"}},
		{"sh -ec with a command after the service", strings.Replace(goodDeployment, `["node", "server.js"]`, `["/bin/sh", "-ec", "python3 app.py\necho exited"]`, 1), []string{"SIGNAL_WRAPPER@11"}},
		{"sh -c cd && exec is fine", strings.Replace(goodDeployment, `["node", "server.js"]`, `["sh", "-c", "cd /app && exec node server.js"]`, 1), nil},
		{"bash -c lone command is fine", strings.Replace(goodDeployment, `["node", "server.js"]`, `["bash", "-c", "node server.js"]`, 1), nil},
		{"sh -c lone command", strings.Replace(goodDeployment, `["node", "server.js"]`, `["sh", "-c", "node server.js"]`, 1), []string{"SIGNAL_WRAPPER@11"}},
		{"bash -c two commands", strings.Replace(goodDeployment, `["node", "server.js"]`, `["bash", "-c", "./migrate && node server.js"]`, 1), []string{"SIGNAL_WRAPPER@11"}},
		{"npm start", strings.Replace(goodDeployment, `["node", "server.js"]`, `["npm", "start"]`, 1), []string{"SIGNAL_WRAPPER@11"}},
		{"sh -c exec npm start", strings.Replace(goodDeployment, `["node", "server.js"]`, `["sh", "-c", "exec npm start"]`, 1), []string{"SIGNAL_WRAPPER@11"}},
		{"npx next start", strings.Replace(goodDeployment, `["node", "server.js"]`, `["npx", "next", "start"]`, 1), []string{"SIGNAL_WRAPPER@11"}},
		{"next start", strings.Replace(goodDeployment, `["node", "server.js"]`, `["next", "start"]`, 1), nil},
		{"compose yarn start", "services:\n  api:\n    stop_grace_period: 25s\n    command: yarn start\n", []string{"SIGNAL_WRAPPER@4"}},
		{"compose stop_signal SIGKILL", "services:\n  api:\n    stop_grace_period: 25s\n    stop_signal: SIGKILL\n", []string{"STOP_SIGNAL_KILL@4"}},
		{"compose stop_signal SIGINT", "services:\n  api:\n    stop_grace_period: 25s\n    stop_signal: SIGINT\n", nil},
		{"findings sorted by line", "services:\n  b:\n    stop_grace_period: 25s\n    command: sh -c 'x; y'\n  a:\n    stop_grace_period: 2s\n    environment: [PRE_DRAIN_MS=1000]\n", []string{"SIGNAL_WRAPPER@4", "STOP_GRACE_TOO_SHORT@6"}},
		{"List and several documents", "kind: ConfigMap\n---\napiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: p}\n  spec:\n    terminationGracePeriodSeconds: 10\n    containers: [{name: c, lifecycle: {preStop: {sleep: {seconds: 5}}}}]\n",
			[]string{"GRACE_TOO_SHORT@9"}},
		{"compose default grace", "services:\n  api:\n    image: x\n    environment:\n      SHUTDOWN_TIMEOUT_MS: 20000\n", []string{"STOP_GRACE_TOO_SHORT@2"}},
		{"compose list env", "services:\n  api:\n    image: x\n    environment:\n      - SHUTDOWN_TIMEOUT_MS=5000\n      - PRE_DRAIN_MS=1000\n", nil},
		{"compose grace ok", "services:\n  api:\n    stop_grace_period: 25s\n", nil},
		{"compose grace 1m30s", "services:\n  api:\n    stop_grace_period: 1m30s\n    environment: {SHUTDOWN_TIMEOUT_MS: '95000'}\n", []string{"STOP_GRACE_TOO_SHORT@3"}},
		{"compose shell form", "services:\n  api:\n    stop_grace_period: 25s\n    command: sh -c 'node server.js'\n", []string{"SIGNAL_WRAPPER@4"}},
		{"compose entrypoint list", "services:\n  api:\n    stop_grace_period: 25s\n    entrypoint: [\"/bin/bash\", \"-c\"]\n    command: [\"./run.sh && wait\"]\n", []string{"SIGNAL_WRAPPER@4"}},
		{"compose exec form", "services:\n  api:\n    stop_grace_period: 25s\n    command: node server.js\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Lint("m.yaml", []byte(tt.yaml), defaults)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Findings {
				got = append(got, f.Name+"@"+strconv.Itoa(f.Line))
				if f.Fix == "" || f.Detail == "" || f.File != "m.yaml" || f.Resource == "" {
					t.Errorf("incomplete finding %+v", f)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got %v, want %v\n%+v", got, tt.want, res.Findings)
			}
		})
	}
}

func TestLintFlagsAndEnv(t *testing.T) {
	// Without env in the manifest, the flags' P and S apply.
	y := "services:\n  api:\n    stop_grace_period: 3s\n"
	res, err := Lint("c.yaml", []byte(y), Timing{PreDrain: 500 * time.Millisecond, ShutdownTimeout: 2 * time.Second, PreDrainSource: "--pre-drain", ShutdownTimeoutSource: "--shutdown-timeout"})
	if err != nil || len(res.Findings) != 0 {
		t.Fatalf("%v %+v", err, res.Findings)
	}
	res, _ = Lint("c.yaml", []byte(y+"    healthcheck: {test: [CMD, curl, -f, 'http://127.0.0.1/ready']}\n"), defaults)
	if len(res.Findings) != 1 || !strings.Contains(res.Findings[0].Detail, "SHUTDOWN_TIMEOUT_MS 20000 (default)") {
		t.Fatalf("%+v", res.Findings)
	}
}

func TestLintErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		line       int
		msg        string
	}{
		{"syntax", "services:\n  api:\n    image: x\n\tbad: y\n", 4, "tab character"},
		{"tab on line 1", "\tservices:\n  api: {}\n", 1, "cannot start any token"},
		{"indent error on line 11", "services:\n  api:\n    image: x\n    environment:\n      A: 1\n      B: 2\n    command: x\n    ports:\n      - 80\n      - 81\n     bad: 1\n", 11, "did not find expected key"},
		{"unclosed flow list", "services:\n  api:\n    command: [a, b\n    image: x\n", 3, "did not find expected ',' or ']'"},
		{"bad grace type", "kind: Pod\nmetadata: {name: p}\nspec:\n  terminationGracePeriodSeconds: soon\n  containers: []\n", 4, "soon"},
		{"bad env", "services:\n  api:\n    environment: {PRE_DRAIN_MS: five}\n", 3, "PRE_DRAIN_MS"},
		{"bad stop_grace_period", "services:\n  api:\n    stop_grace_period: later\n", 3, "stop_grace_period"},
		{"nothing to lint", "kind: ConfigMap\n", 0, "no Kubernetes workload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Lint("m.yaml", []byte(tt.yaml), defaults)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err %v, want a *ParseError", err)
			}
			if pe.Line != tt.line || !strings.Contains(pe.Error(), tt.msg) || pe.File != "m.yaml" {
				t.Errorf("%v (line %d), want line %d and %q", pe, pe.Line, tt.line, tt.msg)
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string]string{
		`a b  c`:                    "a|b|c",
		`sh -c 'svc -x; echo done'`: "sh|-c|svc -x; echo done",
		`x "a \"b\" c" d\ e`:        `x|a "b" c|d e`,
		`  `:                        "",
		`prog --flag=''`:            "prog|--flag=",
	} {
		got, err := SplitWords(in)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := SplitWords(`a 'b`); err == nil {
		t.Error("unterminated quote: no error")
	}
}

func TestSleepOf(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		want time.Duration
		ok   bool
	}{
		{[]string{"sleep", "5"}, 5 * time.Second, true},
		{[]string{"/bin/sleep", "1.5s"}, 1500 * time.Millisecond, true},
		{[]string{"/bin/sh", "-c", "sleep 15"}, 15 * time.Second, true},
		{[]string{"sh", "-c", "echo x; sleep 1m && true"}, time.Minute, true},
		{[]string{"curl", "-X", "POST", "http://127.0.0.1/drain"}, 0, false},
	} {
		got, ok := SleepOf(tt.argv)
		if got != tt.want || ok != tt.ok {
			t.Errorf("SleepOf(%q) = %v %v", tt.argv, got, ok)
		}
	}
}

func TestWrapperCheck(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		bad  bool
		fix  string
	}{
		{[]string{"node", "server.js"}, false, ""},
		{[]string{"sh", "-c", "exec node server.js"}, false, ""},
		{[]string{"sh", "-c", "cd /app && exec node server.js"}, false, ""},
		{[]string{"bash", "-c", "node server.js"}, false, ""},
		{[]string{"/bin/bash", "-lc", "node server.js --port 80"}, false, ""},
		{[]string{"sh", "-c", "node server.js"}, true, `sh|-c|exec node server.js`},
		{[]string{"/bin/sh", "-ec", "python3 app.py\necho exited"}, true, `/bin/sh|-ec|exec python3 app.py`},
		{[]string{"sh", "-c", "cd /app && ./migrate\npython3 app.py\necho exited"}, true, "sh|-c|cd /app && ./migrate\nexec python3 app.py"},
		{[]string{"bash", "-c", "node server.js | tee log"}, true, ""},
		{[]string{"bash", "-c", "./migrate; node server.js"}, true, "bash|-c|./migrate; exec node server.js"},
		{[]string{"npm", "start"}, true, ""},
		{[]string{"yarn", "start"}, true, ""},
		{[]string{"npm", "run", "serve"}, true, ""},
		{[]string{"sh", "-c", "exec npm start"}, true, ""},
		{[]string{"bash", "-c", "npm start"}, true, ""},
		// npx (npm exec) runs next under sh -c and dies of SIGTERM:
		// next-server is never signalled (drain_truth_next, npm 11).
		{[]string{"npx", "next", "start"}, true, "node_modules/.bin/next|start"},
		{[]string{"npx", "--yes", "next", "start", "-p", "3000"}, true, "node_modules/.bin/next|start|-p|3000"},
		{[]string{"npm", "exec", "--", "next", "start"}, true, "node_modules/.bin/next|start"},
		{[]string{"npx", "-p", "next@16", "next", "start"}, true, ""},
		{[]string{"npx", "@scope/server"}, true, ""},
		{[]string{"sh", "-c", "npx next start"}, true, ""},
		{[]string{"next", "start"}, false, ""},
		{[]string{"node_modules/.bin/next", "start"}, false, ""},
		{[]string{"sh", "entrypoint.sh"}, false, ""},
	} {
		why, fix, bad := WrapperCheck(tt.argv)
		if bad != tt.bad || strings.Join(fix, "|") != tt.fix || (bad && why == "") {
			t.Errorf("WrapperCheck(%q) = %q, %q, %v; want bad %v fix %q", tt.argv, why, fix, bad, tt.bad, tt.fix)
		}
	}
}

func TestWrapperBehindInit(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		bad  bool
	}{
		{[]string{"tini", "--", "sh", "-c", "node server.js"}, true},
		{[]string{"/sbin/tini", "-s", "--", "sh", "-c", "node server.js"}, true},
		{[]string{"tini", "-g", "--", "sh", "-c", "node server.js"}, true}, // the shell dies, tini exits
		{[]string{"tini", "-sg", "--", "sh", "-c", "node server.js"}, true},
		{[]string{"tini", "--", "npm", "start"}, true},
		{[]string{"tini", "--", "node", "server.js"}, false},
		{[]string{"tini", "--", "sh", "-c", "exec node server.js"}, false},
		{[]string{"dumb-init", "--single-child", "--", "sh", "-c", "node server.js"}, true},
		{[]string{"dumb-init", "-c", "sh", "-c", "node server.js"}, true},
		{[]string{"dumb-init", "--", "sh", "-c", "node server.js"}, true},
		{[]string{"dumb-init", "-r", "15:3", "sh", "-c", "node server.js"}, true},
		{[]string{"tini", "-g", "--", "sh", "-c", "exec node server.js"}, false},
		{[]string{"dumb-init", "--", "node", "server.js"}, false},
		{[]string{"docker-init", "--", "bash", "-c", "cd /app; node server.js"}, true},
		// catatonit (podman run --init) is tini's shape: its direct
		// child, or its group with -g; dash never execs, even a lone
		// command.
		{[]string{"catatonit", "--", "sh", "-c", "/app/server"}, true},
		{[]string{"/usr/libexec/podman/catatonit", "-g", "--", "sh", "-c", "/app/server"}, true},
		{[]string{"catatonit", "--", "dash", "-c", "/app/server"}, true},
		{[]string{"tini", "-g", "--", "sh", "-c", "/app/server"}, true},
		{[]string{"dumb-init", "sh", "-c", "/app/server"}, true},
		{[]string{"catatonit", "--", "/app/server"}, false},
		{[]string{"catatonit", "-g", "--", "sh", "-c", "exec /app/server"}, false},
	} {
		why, fix, bad := WrapperCheck(tt.argv)
		if bad != tt.bad {
			t.Errorf("%q: bad = %v (%s), want %v", tt.argv, bad, why, tt.bad)
			continue
		}
		if bad && !strings.Contains(why, "direct child only") && !strings.Contains(why, "exits with its child") {
			t.Errorf("%q: %q does not say the init forwards to its direct child only", tt.argv, why)
		}
		if fix != nil && (fix[0] != tt.argv[0]) {
			t.Errorf("%q: fix %q drops the init", tt.argv, fix)
		}
	}
}

func TestComposeInitWrappers(t *testing.T) {
	y := `services:
  a:
    init: true
    environment: [PRE_DRAIN_MS=1000]
    stop_grace_period: 30s
    command: sh -c "node server.js"
  b:
    entrypoint: [tini, --]
    command: sh -c 'node server.js'
    environment: [PRE_DRAIN_MS=1000]
    stop_grace_period: 30s
  c:
    entrypoint: [dumb-init, --single-child, --]
    command: ["sh", "-c", "node server.js"]
    environment: [PRE_DRAIN_MS=1000]
    stop_grace_period: 30s
  d:
    entrypoint: [tini, --, npm, start]
    environment: [PRE_DRAIN_MS=1000]
    stop_grace_period: 30s
  e:
    entrypoint: [dumb-init, --]
    command: sh -c 'node server.js'
    environment: [PRE_DRAIN_MS=1000]
    stop_grace_period: 30s
`
	res, err := Lint("c.yaml", []byte(y), defaults)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Finding{}
	for _, f := range res.Findings {
		if f.Name != SignalWrapper {
			t.Errorf("unexpected %s: %s", f.Name, f.Detail)
		}
		got[f.Resource] = f
	}
	for _, svc := range []string{"a", "b", "c", "d"} {
		f, ok := got["service "+svc]
		if !ok {
			t.Errorf("service %s: no SIGNAL_WRAPPER", svc)
			continue
		}
		if strings.Contains(f.Fix, "run it under an init") {
			t.Errorf("service %s already runs under an init, yet the fix says %q", svc, f.Fix)
		}
	}
	// dumb-init signals the whole group: the service gets SIGTERM, but the
	// shell dies of it and dumb-init, PID 1, exits with it.
	if e, ok := got["service e"]; !ok || !strings.Contains(e.Detail, "dumb-init exits with its child") || !strings.Contains(e.Fix, "exec node server.js") {
		t.Errorf("service e (dumb-init group mode, sh -c without exec): %+v", e)
	}
	if !strings.Contains(got["service a"].Detail, "init: true") {
		t.Errorf("service a: %q does not name init: true", got["service a"].Detail)
	}
}

func TestComposeNotJudged(t *testing.T) {
	y := `services:
  db:
    image: mariadb:11
    stop_grace_period: 3s
  dev:
    image: node
    command: ["node", "--watch", "server.js"]
  api:
    image: api
    stop_grace_period: 3s
    healthcheck: {test: ["CMD", "wget", "-qO-", "http://127.0.0.1:8080/ready"]}
`
	res, err := Lint("c.yaml", []byte(y), defaults)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotJudged) != 2 || !strings.HasPrefix(res.NotJudged[0], "service db: ") || !strings.HasPrefix(res.NotJudged[1], "service dev: ") {
		t.Errorf("not judged %q, want db and dev", res.NotJudged)
	}
	if len(res.Findings) != 1 || res.Findings[0].Name != StopGraceTooShort || res.Findings[0].Resource != "service api" {
		t.Errorf("findings %+v, want api's STOP_GRACE_TOO_SHORT only", res.Findings)
	}
	// P and S given on the command line are the contract for every service.
	res, _ = Lint("c.yaml", []byte(y), Timing{PreDrain: 5 * time.Second, ShutdownTimeout: 20 * time.Second, PreDrainSource: "--pre-drain", ShutdownTimeoutSource: "--shutdown-timeout"})
	if len(res.NotJudged) != 0 {
		t.Errorf("with --pre-drain/--shutdown-timeout: not judged %q", res.NotJudged)
	}
}

// TestK8sNotJudged: a container whose probes all speak something other
// than HTTP or gRPC (a database's exec pg_isready, a tcpSocket) is not held
// to HTTP drain defaults, though its command still is; an exec of curl, an
// httpGet startup probe, PRE_DRAIN_MS, or P and S on the command line make
// it a service to judge; a container without probes is judged as before.
func TestK8sNotJudged(t *testing.T) {
	y := `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    spec:
      containers:
        - name: postgres
          readinessProbe: {exec: {command: ["pg_isready", "-U", "app"]}}
        - name: cache
          command: ["sh", "-c", "redis-server; echo exited"]
          livenessProbe: {tcpSocket: {port: 6379}}
        - name: curls
          readinessProbe: {exec: {command: ["curl", "-f", "http://127.0.0.1:8080/ready"]}}
        - name: starts
          ports: [{containerPort: 80}]
          startupProbe: {httpGet: {path: /started, port: 80}}
        - name: declares
          env: [{name: PRE_DRAIN_MS, value: "5000"}]
          readinessProbe: {tcpSocket: {port: 9000}}
        - name: bare
          ports: [{containerPort: 8080}]
`
	res, err := Lint("db.yaml", []byte(y), defaults)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"StatefulSet/db container postgres: ", "StatefulSet/db container cache: "}
	if len(res.NotJudged) != len(want) {
		t.Fatalf("not judged %q, want postgres and cache", res.NotJudged)
	}
	for i, w := range want {
		if !strings.HasPrefix(res.NotJudged[i], w) || !strings.Contains(res.NotJudged[i], "speak neither HTTP nor gRPC") {
			t.Errorf("not judged %q, want it to start %q", res.NotJudged[i], w)
		}
	}
	got := map[string][]string{}
	for _, f := range res.Findings {
		got[f.Container] = append(got[f.Container], f.Name)
	}
	if len(got["postgres"]) != 0 {
		t.Errorf("postgres, not judged, has findings %v", got["postgres"])
	}
	if c := got["cache"]; len(c) != 1 || c[0] != SignalWrapper {
		t.Errorf("cache: findings %v, want its command's SIGNAL_WRAPPER only", c)
	}
	// "declares" sets PRE_DRAIN_MS: it pre-drains itself, no preStop
	// needed; judged all the same (not among NotJudged).
	for _, nj := range res.NotJudged {
		if strings.Contains(nj, "container declares:") {
			t.Errorf("declares is not judged: %q", nj)
		}
	}
	for _, name := range []string{"curls", "starts", "bare"} {
		found := false
		for _, code := range got[name] {
			found = found || code == PrestopTooShort
		}
		if !found {
			t.Errorf("%s: findings %v, want PRESTOP_TOO_SHORT (it is judged)", name, got[name])
		}
	}
	res, _ = Lint("db.yaml", []byte(y), Timing{PreDrain: 5 * time.Second, ShutdownTimeout: 20 * time.Second, PreDrainSource: "--pre-drain", ShutdownTimeoutSource: "--shutdown-timeout"})
	if len(res.NotJudged) != 0 {
		t.Errorf("with --pre-drain/--shutdown-timeout: not judged %q", res.NotJudged)
	}
}

func TestLivenessEqReadinessSaysWhoActs(t *testing.T) {
	y := "kind: Pod\nmetadata: {name: p}\nspec:\n  terminationGracePeriodSeconds: 60\n  containers:\n  - name: c\n    lifecycle: {preStop: {sleep: {seconds: 5}}}\n    readinessProbe: {httpGet: {path: /h, port: 80}}\n    livenessProbe: {httpGet: {path: /h, port: 80}}\n"
	res, err := Lint("p.yaml", []byte(y), defaults)
	if err != nil || len(res.Findings) != 1 {
		t.Fatalf("%v %+v", err, res.Findings)
	}
	d := res.Findings[0].Detail
	for _, want := range []string{"Docker autoheal", "ECS", "Nomad", "Consul", "current Kubernetes"} {
		if !strings.Contains(d, want) {
			t.Errorf("%q does not say %q", d, want)
		}
	}
	if strings.Contains(d, "the kubelet restarts the pod") {
		t.Errorf("%q: current Kubernetes stops liveness probes of a terminating pod", d)
	}
}

// TestSupervisors: runsvdir as PID 1 exits on TERM without signalling its
// services; runsv passes TERM to ./run, which must exec; pm2-runtime turns
// TERM into INT and SIGKILLs after kill_timeout (1.6 s by default). Each
// is flagged wherever it ends up running (behind an init, exec'd by a
// shell); a shell that runs it without exec is flagged as the shell.
func TestSupervisors(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"runsvdir", "-P", "/etc/service"}, "runsvdir exits on SIGTERM at once without signalling its services"},
		{[]string{"/usr/bin/runsvdir", "/etc/service"}, "runsvdir exits"},
		{[]string{"tini", "--", "runsvdir", "/etc/service"}, "runsvdir exits"},
		{[]string{"sh", "-c", "exec runsvdir /etc/service"}, "runsvdir exits"},
		{[]string{"runsv", "/etc/service/app"}, "./run process only: the run script (which this file does not show) must exec the service"},
		{[]string{"pm2-runtime", "ecosystem.config.js"}, "turns SIGTERM into SIGINT for its apps (they must drain on SIGINT) and SIGKILLs them kill_timeout (default 1600 ms) later"},
		{[]string{"pm2-runtime", "start", "app.js", "-i", "2"}, "default 1600 ms"},
		{[]string{"pm2-runtime", "app.js", "--kill-timeout", "25000"}, "--kill-timeout 25000 ms later"},
		{[]string{"dumb-init", "pm2-runtime", "app.js"}, "default 1600 ms"},
		{[]string{"sh", "-c", "runsvdir /etc/service"}, "runs the service as a child of the shell"},
	} {
		why, _, bad := WrapperCheck(tt.argv)
		if !bad || !strings.Contains(why, tt.want) {
			t.Errorf("WrapperCheck(%q) = %q, %v; want a finding saying %q", tt.argv, why, bad, tt.want)
		}
	}
	for _, argv := range [][]string{{"pm2", "logs"}, {"runit"}, {"sv", "status", "app"}} {
		if why, _, bad := WrapperCheck(argv); bad {
			t.Errorf("WrapperCheck(%q) = %q: want no finding", argv, why)
		}
	}
}

// TestComposeSupervisorsAndSignals: each wrapper as a Compose file writes
// it, with the fix; and the signals servers stop at once on.
func TestComposeSupervisorsAndSignals(t *testing.T) {
	for _, tt := range []struct {
		name, svc string
		want      []string // "CODE@line"
		fix       string
	}{
		{"catatonit sh -c", "    entrypoint: [catatonit, --]\n    command: sh -c '/app/server'\n", []string{"SIGNAL_WRAPPER@4"}, `exec /app/server`},
		{"catatonit -g sh -c", "    entrypoint: [catatonit, -g, --]\n    command: sh -c '/app/server'\n", []string{"SIGNAL_WRAPPER@4"}, `exec /app/server`},
		{"runsvdir", "    command: [runsvdir, -P, /etc/service]\n", []string{"SIGNAL_WRAPPER@4"}, "runsv: make ./run exec"},
		{"pm2-runtime", "    command: [pm2-runtime, ecosystem.config.js]\n", []string{"SIGNAL_WRAPPER@4"}, "kill_timeout"},
		{"thin SIGINT", "    command: [bundle, exec, thin, start]\n    stop_signal: SIGINT\n", []string{"STOP_SIGNAL_FAST@5"}, "stop_signal: SIGTERM"},
		{"thin SIGTERM", "    command: [bundle, exec, thin, start]\n    stop_signal: SIGTERM\n", nil, ""},
		{"gunicorn INT", "    command: [gunicorn, app:app]\n    stop_signal: INT\n", []string{"STOP_SIGNAL_FAST@5"}, "stop_signal: SIGTERM"},
		{"thin SIGKILL", "    command: [thin, start]\n    stop_signal: SIGKILL\n", []string{"STOP_SIGNAL_KILL@5"}, "stop_signal: SIGTERM (thin's graceful stop; SIGINT, its fast one"},
	} {
		y := "services:\n  app:\n    environment: [PRE_DRAIN_MS=1000]\n" + tt.svc + "    stop_grace_period: 30s\n"
		res, err := Lint("compose.yaml", []byte(y), defaults)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		fixes := ""
		for _, f := range res.Findings {
			got = append(got, f.Name+"@"+strconv.Itoa(f.Line))
			fixes += f.Fix + "\n"
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") || !strings.Contains(fixes, tt.fix) {
			t.Errorf("%s: findings %v (fixes %q), want %v with a fix saying %q", tt.name, got, fixes, tt.want, tt.fix)
		}
	}
}

// TestSelfDrain: an app whose own PRE_DRAIN_MS covers P needs no preStop
// sleep; one whose PRE_DRAIN_MS is shorter than the --pre-drain asked
// does.
func TestSelfDrain(t *testing.T) {
	noHook := strings.Replace(goodDeployment, "          lifecycle:\n            preStop:\n              sleep:\n                seconds: 5\n", "", 1)
	for _, tt := range []struct {
		name string
		t    Timing
		want bool
	}{
		{"PRE_DRAIN_MS alone", defaults, false},
		{"PRE_DRAIN_MS = --pre-drain", Timing{PreDrain: 5 * time.Second, ShutdownTimeout: 20 * time.Second, PreDrainSource: "--pre-drain", ShutdownTimeoutSource: "default"}, false},
		{"PRE_DRAIN_MS < --pre-drain", Timing{PreDrain: 8 * time.Second, ShutdownTimeout: 20 * time.Second, PreDrainSource: "--pre-drain", ShutdownTimeoutSource: "default"}, true},
	} {
		res, err := Lint("m.yaml", []byte(noHook), tt.t)
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, f := range res.Findings {
			got = got || f.Name == PrestopTooShort
		}
		if got != tt.want {
			t.Errorf("%s: PRESTOP_TOO_SHORT %v, want %v (%+v)", tt.name, got, tt.want, res.Findings)
		}
	}
}
