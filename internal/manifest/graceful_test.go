package manifest

import (
	"strings"
	"testing"
	"time"
)

func TestServerOf(t *testing.T) {
	for _, c := range []struct {
		argv  []string
		image string
		want  string // graceful signal, "" for none
	}{
		{[]string{"nginx", "-g", "daemon off;"}, "", "SIGQUIT"},
		{[]string{"/usr/sbin/nginx"}, "", "SIGQUIT"},
		{[]string{"tini", "-g", "--", "sh", "-c", "envsubst < t > /etc/nginx/nginx.conf && exec nginx -g 'daemon off;'"}, "", "SIGQUIT"},
		{[]string{"httpd-foreground"}, "", "SIGWINCH"},
		{[]string{"apache2ctl", "-D", "FOREGROUND"}, "", "SIGWINCH"},
		{[]string{"dumb-init", "--", "apache2", "-DFOREGROUND"}, "", "SIGWINCH"},
		{[]string{"bundle", "exec", "unicorn", "-c", "config/unicorn.rb"}, "", "SIGQUIT"},
		{nil, "nginx:1.27", "SIGQUIT"},
		{nil, "docker.io/library/httpd:2.4@sha256:abc", "SIGWINCH"},
		{nil, "nginxinc/nginx-unprivileged:stable", "SIGQUIT"},
		// A command that is none of them wins over the image's name.
		{[]string{"node", "server.js"}, "nginx", ""},
		{[]string{"puma"}, "", ""},
		{nil, "app:1", ""},
	} {
		srv, ok := serverOf(c.argv, c.image)
		if got := map[bool]string{true: srv.Signal}[ok]; got != c.want {
			t.Errorf("serverOf(%q, %q) = %q, want %q", c.argv, c.image, got, c.want)
		}
	}
}

func TestSleepThenHook(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string // "" for none
	}{
		{[]string{"nginx", "-s", "quit"}, `["sh", "-c", "sleep 5 && nginx -s quit"]`},
		{[]string{"/usr/sbin/nginx", "-s", "quit"}, `["sh", "-c", "sleep 5 && /usr/sbin/nginx -s quit"]`},
		{[]string{"apachectl", "-k", "graceful-stop"}, `["sh", "-c", "sleep 5 && apachectl -k graceful-stop"]`},
		{[]string{"sh", "-c", "kill -QUIT 1"}, `["sh", "-c", "sleep 5 && kill -QUIT 1"]`},
		{[]string{"sh", "-c", "kill -s WINCH 1"}, `["sh", "-c", "sleep 5 && kill -s WINCH 1"]`},
		// nginx -s stop is the fast stop; a plain kill is TERM: no
		// graceful stop to keep.
		{[]string{"nginx", "-s", "stop"}, ""},
		{[]string{"sh", "-c", "kill 1"}, ""},
		{[]string{"/app/drain.sh"}, ""},
	} {
		got, ok := sleepThenHook(c.argv, 5)
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("sleepThenHook(%q) = %s, want %s", c.argv, got, c.want)
		}
	}
}

// TestGracefulSignals: the lint knows nginx's QUIT, httpd's WINCH and
// unicorn's QUIT (TERM is the fast stop of each, drain_graceful_signals),
// flags a stop signal that is their fast stop, and never suggests a fix
// that drops their graceful one.
func TestGracefulSignals(t *testing.T) {
	k8s := func(container string) string {
		return `kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
        - name: web
          ports: [{containerPort: 80}]
          readinessProbe: {httpGet: {path: /ready, port: 80}}
` + container
	}
	compose := func(svc string) string {
		return "services:\n  web:\n    stop_grace_period: 30s\n    environment: {PRE_DRAIN_MS: \"5000\", SHUTDOWN_TIMEOUT_MS: \"20000\"}\n" + svc
	}
	for _, c := range []struct {
		name, yaml string
		want       []string // CODE: text in its fix (or detail)
		none       []string // texts no fix may hold
	}{
		{"k8s nginx preStop nginx -s quit, no sleep", k8s("          image: nginx:1.27\n          lifecycle: {preStop: {exec: {command: [nginx, -s, quit]}}}\n"),
			[]string{`PRESTOP_TOO_SHORT: ["sh", "-c", "sleep 5 && nginx -s quit"]`}, []string{"seconds: 5 ("}},
		{"k8s httpd stopSignal SIGKILL", k8s("          image: httpd:2.4\n          lifecycle: {preStop: {sleep: {seconds: 5}}, stopSignal: SIGKILL}\n"),
			[]string{"STOP_SIGNAL_KILL: lifecycle.stopSignal: SIGWINCH"}, []string{"SIGTERM (or"}},
		{"k8s nginx stopSignal SIGTERM", k8s("          command: [nginx, -g, 'daemon off;']\n          lifecycle: {preStop: {sleep: {seconds: 5}}, stopSignal: SIGTERM}\n"),
			[]string{"STOP_SIGNAL_FAST: lifecycle.stopSignal: SIGQUIT"}, nil},
		{"k8s nginx stopSignal SIGQUIT", k8s("          command: [nginx, -g, 'daemon off;']\n          lifecycle: {preStop: {sleep: {seconds: 5}}, stopSignal: SIGQUIT}\n"),
			nil, nil},
		{"k8s app stopSignal SIGTERM", k8s("          command: [node, server.js]\n          lifecycle: {preStop: {sleep: {seconds: 5}}, stopSignal: SIGTERM}\n"),
			nil, nil},
		{"compose nginx stop_signal SIGTERM", compose("    image: nginx:1.27\n    stop_signal: SIGTERM\n"),
			[]string{"STOP_SIGNAL_FAST: stop_signal: SIGQUIT"}, nil},
		{"compose httpd stop_signal 15", compose("    command: httpd-foreground\n    stop_signal: \"15\"\n"),
			[]string{"STOP_SIGNAL_FAST: stop_signal: SIGWINCH"}, nil},
		{"compose apache2 stop_signal WINCH", compose("    command: apache2 -DFOREGROUND\n    stop_signal: WINCH\n"), nil, nil},
		{"compose unicorn stop_signal SIGKILL", compose("    command: bundle exec unicorn -c config/unicorn.rb\n    stop_signal: SIGKILL\n"),
			[]string{"STOP_SIGNAL_KILL: stop_signal: SIGQUIT (unicorn's graceful stop"}, []string{"SIGTERM (or"}},
		// The image's STOPSIGNAL (nginx's and httpd's official images
		// set QUIT and WINCH) is not in the file: no finding without an
		// explicit signal.
		{"compose nginx, image's stop signal", compose("    image: nginx:1.27\n"), nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Lint("m.yaml", []byte(c.yaml), Timing{PreDrain: 5 * time.Second, ShutdownTimeout: 20 * time.Second, PreDrainSource: "default", ShutdownTimeoutSource: "default"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Findings {
				got = append(got, f.Name+": "+f.Fix+" | "+f.Detail)
			}
			if len(c.want) == 0 && len(got) > 0 {
				t.Errorf("findings %q, want none", got)
			}
			for _, w := range c.want {
				code, text, _ := strings.Cut(w, ": ")
				found := false
				for _, f := range res.Findings {
					found = found || f.Name == code && strings.Contains(f.Fix+" "+f.Detail, text)
				}
				if !found {
					t.Errorf("no %s saying %q in %q", code, text, got)
				}
			}
			for _, f := range res.Findings {
				for _, n := range c.none {
					if strings.Contains(f.Fix, n) {
						t.Errorf("%s's fix %q holds %q", f.Name, f.Fix, n)
					}
				}
			}
		})
	}
}

func TestSupervisordIsAWrapper(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"supervisord", "-n", "-c", "/etc/supervisord.conf"}, true},
		{[]string{"/usr/bin/supervisord", "-n"}, true},
		{[]string{"tini", "-g", "--", "supervisord", "-n"}, true},
		{[]string{"dumb-init", "supervisord", "-n"}, true},
		{[]string{"sh", "-c", "envsubst < a > b && exec supervisord -n"}, true},
		{[]string{"supervisorctl", "status"}, false},
		// Without exec the shell is the wrapper: that finding, not this.
		{[]string{"sh", "-c", "supervisord -n; echo done"}, false},
		{[]string{"node", "server.js"}, false},
	} {
		why, ok := supervisord(c.argv)
		_, _, bad := WrapperCheck(c.argv)
		if ok != c.want || c.want && !bad || c.want && !strings.Contains(why, "stopwaitsecs (default 10 s)") {
			t.Errorf("supervisord(%q) = %q, %v (wrapper %v); want supervisord's finding: %v", c.argv, why, ok, bad, c.want)
		}
	}
}
