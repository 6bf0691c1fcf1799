package manifest

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// gracefulServer is a server the lint recognises whose graceful stop is
// not SIGTERM: on TERM it stops at once and cuts the requests in flight
// (drain_graceful_signals shows it on nginx and Apache httpd).
type gracefulServer struct {
	// Name is how findings call it.
	Name string
	// Signal is its graceful stop: SIGQUIT, SIGWINCH.
	Signal string
}

// gracefulServers by command or image name (built on first use: a
// package-level map literal is built at every start, probe included).
var gracefulServers = sync.OnceValue(func() map[string]gracefulServer {
	return map[string]gracefulServer{
		"nginx":              {"nginx", "SIGQUIT"},
		"nginx-debug":        {"nginx", "SIGQUIT"},
		"nginx-unprivileged": {"nginx", "SIGQUIT"},
		"openresty":          {"nginx", "SIGQUIT"},
		"httpd":              {"Apache httpd", "SIGWINCH"},
		"httpd-foreground":   {"Apache httpd", "SIGWINCH"},
		"apache2":            {"Apache httpd", "SIGWINCH"},
		"apache2-foreground": {"Apache httpd", "SIGWINCH"},
		"apachectl":          {"Apache httpd", "SIGWINCH"},
		"apache2ctl":         {"Apache httpd", "SIGWINCH"},
		"unicorn":            {"unicorn", "SIGQUIT"},
		"unicorn_rails":      {"unicorn", "SIGQUIT"},
		// SIGTERM is their graceful stop, SIGINT their fast one: judged only
		// when stop_signal says SIGINT.
		"thin":     {"thin", "SIGTERM"},
		"gunicorn": {"gunicorn", "SIGTERM"},
	}
})

// serverOf recognises the server a container runs: its command (through an
// init, a shell's last command, exec, bundle exec), else its image's name
// (nginx:1.27, docker.io/library/httpd:2.4).
func serverOf(argv []string, image string) (gracefulServer, bool) {
	if s, ok := serverOfArgv(argv, 0); ok {
		return s, true
	}
	if len(argv) > 0 {
		return gracefulServer{}, false // a command that is none of them
	}
	name := image
	if i := strings.IndexAny(name, "@"); i >= 0 {
		name = name[:i]
	}
	name = path.Base(name)
	if i := strings.Index(name, ":"); i >= 0 {
		name = name[:i]
	}
	s, ok := gracefulServers()[name]
	return s, ok
}

func serverOfArgv(argv []string, depth int) (gracefulServer, bool) {
	if len(argv) == 0 || depth > 4 {
		return gracefulServer{}, false
	}
	if _, _, rest, ok := initOf(argv); ok {
		return serverOfArgv(rest, depth+1)
	}
	if _, _, script, ok := shellScript(argv); ok {
		cmds := splitScript(script)
		for i := len(cmds) - 1; i >= 0; i-- {
			if w := cmds[i].words; len(w) > 0 && !slices.Contains(helpers, path.Base(w[0])) {
				return serverOfArgv(w, depth+1)
			}
		}
		return gracefulServer{}, false
	}
	switch {
	case argv[0] == "exec" || argv[0] == "env":
		return serverOfArgv(argv[1:], depth+1)
	case path.Base(argv[0]) == "bundle" && len(argv) > 2 && argv[1] == "exec":
		return serverOfArgv(argv[2:], depth+1)
	}
	s, ok := gracefulServers()[path.Base(argv[0])]
	return s, ok
}

// normalSignal is a stop signal as SIGNAME ("TERM", "15", "sigterm": SIGTERM).
func normalSignal(sig string) string {
	s := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(sig)), "SIG")
	switch s {
	case "15":
		s = "TERM"
	case "2":
		s = "INT"
	case "3":
		s = "QUIT"
	case "28":
		s = "WINCH"
	}
	return "SIG" + s
}

// fastStop says sig is srv's fast stop: SIGTERM or SIGINT for a server
// whose graceful stop is another signal.
func fastStop(srv gracefulServer, sig string) bool {
	n := normalSignal(sig)
	return (n == "SIGTERM" || n == "SIGINT") && n != srv.Signal
}

// gracefulWhy is srv's graceful stop in words, for a finding or a fix.
func gracefulWhy(srv gracefulServer) string {
	if srv.Signal == "SIGTERM" {
		return fmt.Sprintf("%s's graceful stop; SIGINT, its fast one, cuts the requests in flight", srv.Name)
	}
	return fmt.Sprintf("%s's graceful stop; SIGTERM, its fast one, cuts the requests in flight", srv.Name)
}

// stopsGracefully finds a graceful stop in a preStop hook: nginx -s quit,
// apachectl -k graceful-stop, kill -QUIT / -WINCH.
var stopsGracefully = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bnginx\b[^;&|]*\s-s\s+quit\b|\b(apache2?ctl|httpd|apache2)\b[^;&|]*\s-k\s+graceful-stop\b|\bkill\s+(-s\s+)?-?(SIG)?(QUIT|WINCH|3|28)\b`)
})

// sleepThenHook is a preStop hook that stops the server at once (nginx -s
// quit) with a sleep of need seconds in front, keeping the stop, as a YAML
// flow list; ok is false when argv is no such hook.
func sleepThenHook(argv []string, need int) (string, bool) {
	var script string
	if _, _, s, ok := shellScript(argv); ok {
		script = s
	} else {
		script = shellJoin(argv)
	}
	if !stopsGracefully().MatchString(script) {
		return "", false
	}
	out := []string{"sh", "-c", "sleep " + strconv.Itoa(need) + " && " + script}
	q := make([]string, len(out))
	for i, w := range out {
		q[i] = strconv.Quote(w)
	}
	return "[" + strings.Join(q, ", ") + "]", true
}

// shellJoin quotes argv's words for sh where they need it.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, w := range argv {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`;&|<>()*?[]#~") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		q[i] = w
	}
	return strings.Join(q, " ")
}
