package manifest

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

// shells and helpers are slices, which the linker lays out: a
// package-level map literal is built at every start, probe included.
var shells = []string{"sh", "bash", "ash", "dash", "zsh", "ksh"}

// shellScript finds a `SHELL [options] -c SCRIPT` command: -c may be
// clustered with other options (sh -ec, bash -lc). ok is false for
// anything else (the exec form, a shell running a script file).
func shellScript(argv []string) (shell, opt, script string, ok bool) {
	if len(argv) < 2 || !slices.Contains(shells, path.Base(argv[0])) {
		return "", "", "", false
	}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-o" || a == "+o":
			i++ // takes an option name
		case strings.HasPrefix(a, "--"):
			// --login, --norc: long options take no script.
		case strings.HasPrefix(a, "-") && strings.Contains(a[1:], "c"):
			if i+1 < len(argv) {
				return path.Base(argv[0]), a, argv[i+1], true
			}
			return "", "", "", false
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
		default:
			return "", "", "", false // a script file: its content is not here
		}
	}
	return "", "", "", false
}

// shellCmd is one command of a script, with its place in the script.
type shellCmd struct {
	start, end int
	words      []string
	// simple says it is a plain command: no pipe, no background, no
	// subshell or group.
	simple bool
}

// splitScript splits a shell script into its top-level commands at
// newlines, ;, &&, ||, & and | (quotes respected; a pipeline or a
// background job is one command that is not simple). Comments are dropped.
func splitScript(s string) []shellCmd {
	var (
		out   []shellCmd
		cur   = shellCmd{start: -1, simple: true}
		word  strings.Builder
		inW   bool
		quote byte
	)
	endWord := func() {
		if inW {
			cur.words = append(cur.words, word.String())
			word.Reset()
			inW = false
		}
	}
	endCmd := func(at int) {
		endWord()
		if len(cur.words) > 0 {
			cur.end = at
			out = append(out, cur)
		}
		cur = shellCmd{start: -1, simple: true}
	}
	mark := func(i int) {
		if cur.start < 0 {
			cur.start = i
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				word.WriteByte(c)
			}
		case c == '\'' || c == '"':
			mark(i)
			quote, inW = c, true
		case c == '\\' && i+1 < len(s):
			mark(i)
			i++
			if s[i] != '\n' {
				word.WriteByte(s[i])
				inW = true
			}
		case c == '#' && !inW:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			endCmd(i)
		case c == '\n' || c == ';':
			endCmd(i)
		case c == '&' && i+1 < len(s) && s[i+1] == '&', c == '|' && i+1 < len(s) && s[i+1] == '|':
			endCmd(i)
			i++
		case c == '&' || c == '|':
			// A background job or a pipeline: the shell waits for (or
			// forks) it; it is never exec'd.
			endWord()
			cur.simple = false
		case c == '(' || c == ')' || c == '{' || c == '}':
			mark(i)
			endWord()
			cur.simple = false
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		default:
			mark(i)
			word.WriteByte(c)
			inW = true
		}
	}
	endCmd(len(s))
	return out
}

// forwardsNot says a command starts the service under a package manager
// that does not pass SIGTERM on to it: npm start, npm run X, yarn start,
// yarn run X, pnpm start; npx X and npm exec X (npm runs X under sh -c and
// dies of the signal: drain_truth_next's `npx next start` left next-server
// running, never signalled).
func forwardsNot(words []string) (string, bool) {
	if len(words) < 2 {
		return "", false
	}
	switch pm := path.Base(words[0]); pm {
	case "npm", "yarn", "pnpm":
		if words[1] == "start" || words[1] == "run" || words[1] == "run-script" || (pm == "yarn" && !strings.HasPrefix(words[1], "-")) || (pm == "npm" && (words[1] == "exec" || words[1] == "x")) {
			return strings.Join(words[:min(len(words), 3)], " "), true
		}
	case "npx":
		return strings.Join(words[:min(len(words), 3)], " "), true
	}
	return "", false
}

// npxBinary is what npx (npm exec, npm x) runs, as the local binary it
// finds: `npx next start -p 3000` is node_modules/.bin/next start -p 3000
// (nil when the words name no plain binary: --package, --call, a version).
func npxBinary(words []string) []string {
	var rest []string
	switch {
	case len(words) > 1 && path.Base(words[0]) == "npx":
		rest = words[1:]
	case len(words) > 2 && path.Base(words[0]) == "npm" && (words[1] == "exec" || words[1] == "x"):
		rest = words[2:]
	default:
		return nil
	}
opts:
	for len(rest) > 0 {
		switch a := rest[0]; {
		case a == "--":
			rest = rest[1:]
			break opts
		case a == "-y" || a == "--yes" || a == "--no" || a == "--no-install" || a == "-q" || a == "--quiet":
			rest = rest[1:]
		case strings.HasPrefix(a, "-"):
			return nil // --package, --call, options npx reads otherwise
		default:
			break opts
		}
	}
	if len(rest) == 0 || strings.ContainsAny(rest[0], "@/") {
		return nil
	}
	return append([]string{"node_modules/.bin/" + rest[0]}, rest[1:]...)
}

// helpers are commands that do not start a service (they run before or
// after it in a wrapper script).
var helpers = []string{"echo", "printf", "true", ":", "exit", "wait", "sleep", "cd", "export", "set", "trap"}

// WrapperCheck says whether argv keeps SIGTERM from the service, judged as
// the shells behave: `sh -c` runs the service as its child unless the last
// command is exec'd (so `sh -c "cd /app && exec node server.js"` is fine);
// bash execs a lone simple command (`bash -c "node server.js"` is fine);
// `sh -ec` is `sh -c`; npm start / yarn start never forward the signal. An
// init in front (tini, dumb-init) forwards the signal to its direct child
// only, unless it signals the whole process group (tini -g, dumb-init's
// default): `tini -- sh -c "node server.js"` still loses it, `dumb-init --
// sh -c …` does not. fix is a corrected argv when one can be derived (the
// init kept in front).
func WrapperCheck(argv []string) (why string, fix []string, bad bool) {
	if why, ok := supervisord(argv); ok {
		return why, nil, true
	}
	if why, ok := supervisorOf(argv); ok {
		return why, nil, true
	}
	name, group, rest, ok := initOf(argv)
	if !ok {
		return shellCheck(argv)
	}
	if len(rest) == 0 {
		return "", nil, false
	}
	why, fix, bad = WrapperCheck(rest)
	if !bad {
		return "", nil, false
	}
	if group {
		// The whole group gets the signal, the service with it, but so
		// does the shell (or npm) between them, which dies of it; the
		// init exits with its child, and as PID 1 it ends the container
		// while the service drains (drain-test: WRAPPER_EXITED_EARLY).
		how := "-g"
		if name == "dumb-init" {
			how = "group mode, its default"
		}
		why = fmt.Sprintf("%s (%s) signals the whole group, so the service gets SIGTERM, but the wrapper in between (%s, which does not exec the service) dies of it and %s exits with its child: as PID 1 it stops the container while the service drains", name, how, strings.Join(rest, " "), name)
		if fix != nil {
			fix = append(append([]string{}, argv[:len(argv)-len(rest)]...), fix...)
		}
		return why, fix, true
	}
	how := "without -g"
	if name == "dumb-init" {
		how = "with --single-child"
	}
	why = fmt.Sprintf("%s (%s) forwards the signal to its direct child only: %s", name, how, why)
	if fix != nil {
		fix = append(append([]string{}, argv[:len(argv)-len(rest)]...), fix...)
	}
	return why, fix, true
}

// serviceCommand is the command that runs in the end: through inits, a
// shell's exec'd last command and exec itself ("" when a shell runs it
// without exec: the shell is the wrapper, shellCheck says so).
func serviceCommand(argv []string) []string {
	for i := 0; i < 4 && len(argv) > 0; i++ {
		if _, _, rest, ok := initOf(argv); ok {
			argv = rest
			continue
		}
		if _, _, script, ok := shellScript(argv); ok {
			if cmds := splitScript(script); len(cmds) > 0 && cmds[len(cmds)-1].words[0] == "exec" {
				argv = cmds[len(cmds)-1].words
				continue
			}
			return nil
		}
		if argv[0] == "exec" {
			argv = argv[1:]
			continue
		}
		break
	}
	return argv
}

// supervisorOf says argv runs a supervisor that does not give the service
// SIGTERM with S to drain: runsvdir exits on TERM without signalling its
// services (runsv, and the run scripts under it, are killed with the
// container); runsv passes TERM to ./run, which must exec the service (a
// file this one does not show); pm2-runtime turns TERM into SIGINT for its
// apps and SIGKILLs them kill_timeout (1600 ms by default) later.
func supervisorOf(argv []string) (string, bool) {
	argv = serviceCommand(argv)
	if len(argv) == 0 {
		return "", false
	}
	switch path.Base(argv[0]) {
	case "runsvdir":
		return "runsvdir exits on SIGTERM at once without signalling its services: as PID 1 it ends the container, and the services with it, undrained", true
	case "runsv":
		return "runsv passes SIGTERM to its ./run process only: the run script (which this file does not show) must exec the service, or the shell running it takes the signal and the service never gets it", true
	case "pm2-runtime":
		for i, a := range argv {
			if strings.HasPrefix(a, "--kill-timeout") {
				v := strings.TrimPrefix(strings.TrimPrefix(a, "--kill-timeout"), "=")
				if v == "" && i+1 < len(argv) {
					v = argv[i+1]
				}
				return fmt.Sprintf("pm2-runtime turns SIGTERM into SIGINT for its apps (they must drain on SIGINT) and SIGKILLs them --kill-timeout %s ms later: check that it is >= SHUTDOWN_TIMEOUT_MS + margin", v), true
			}
		}
		return "pm2-runtime turns SIGTERM into SIGINT for its apps (they must drain on SIGINT) and SIGKILLs them kill_timeout (default 1600 ms) later, as supervisord does after stopwaitsecs: the drain is cut at 1.6 s", true
	}
	return "", false
}

// supervisorFix is the fix for runsvdir, runsv and pm2-runtime in front of
// the service.
const supervisorFix = `run the service itself as the command (e.g. ["node", "server.js"], under tini if it needs an init); runsv: make ./run exec the service; pm2-runtime: set kill_timeout (ecosystem file, or --kill-timeout) >= SHUTDOWN_TIMEOUT_MS + margin and drain on SIGINT`

// supervisord says argv runs supervisord (behind an init, or exec'd by a
// shell): it passes SIGTERM on to its programs, but as each program's
// stopsignal (default TERM, the fast stop of nginx, httpd and unicorn) and
// SIGKILLs them stopwaitsecs (default 10 s) later, both in supervisord.conf,
// which the file does not show (drain_supervisord: stopwaitsecs=1 cut the
// requests in flight of a service that drained right).
func supervisord(argv []string) (string, bool) {
	argv = serviceCommand(argv)
	if len(argv) == 0 || path.Base(argv[0]) != "supervisord" {
		return "", false
	}
	return "supervisord stops the service with its program's stopsignal (default TERM: the fast stop of nginx, httpd and unicorn) and SIGKILLs it stopwaitsecs (default 10 s) later, both in supervisord.conf, which this file does not show: give the program stopwaitsecs >= SHUTDOWN_TIMEOUT_MS + margin and its graceful stopsignal", true
}

// supervisordFix is the fix for supervisord in front of the service.
const supervisordFix = `run the service itself as the command (e.g. ["node", "server.js"], under tini if it needs an init), or keep supervisord and set the program's stopwaitsecs (>= SHUTDOWN_TIMEOUT_MS + margin) and stopsignal (QUIT for nginx and unicorn, WINCH for httpd, else TERM) in supervisord.conf`

// initOf reads an init in front of the service: tini (docker-init is
// tini) or dumb-init, its options, and the command it runs. group says it
// signals the child's whole process group (tini -g; dumb-init unless
// --single-child).
func initOf(argv []string) (name string, group bool, rest []string, ok bool) {
	if len(argv) == 0 {
		return "", false, nil, false
	}
	switch path.Base(argv[0]) {
	case "tini", "tini-static", "docker-init":
		name = "tini"
	case "catatonit":
		// Podman's init (podman run --init): its direct child only,
		// its whole group with -g, as tini.
		name = "catatonit"
	case "dumb-init":
		name, group = "dumb-init", true
	default:
		return "", false, nil, false
	}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			return name, group, argv[i+1:], true
		case name == "dumb-init" && (a == "--single-child" || a == "-c"):
			group = false
		case name == "dumb-init" && (a == "-r" || a == "--rewrite"):
			i++ // takes s:r
		case name == "tini" && (a == "-p" || a == "-e"):
			i++ // takes a signal, an exit code
		case (name == "tini" || name == "catatonit") && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "g"):
			group = true
		case strings.HasPrefix(a, "-"):
		default:
			return name, group, argv[i:], true
		}
	}
	return name, group, nil, true
}

// shellCheck judges argv as the shells behave (see WrapperCheck).
func shellCheck(argv []string) (why string, fix []string, bad bool) {
	if _, ok := forwardsNot(argv); ok {
		return fmt.Sprintf("%q runs the service under %s, which does not forward SIGTERM to it: the service is killed at the end of the grace period, undrained", strings.Join(argv, " "), path.Base(argv[0])), npxBinary(argv), true
	}
	shell, opt, script, ok := shellScript(argv)
	if !ok {
		return "", nil, false
	}
	cmds := splitScript(script)
	if len(cmds) == 0 {
		return "", nil, false
	}
	last := cmds[len(cmds)-1]
	if last.words[0] == "exec" {
		if pm, ok := forwardsNot(last.words[1:]); ok {
			return fmt.Sprintf("%s %s %q execs %s, which does not forward SIGTERM to the service", argv[0], opt, script, pm), nil, true
		}
		return "", nil, false
	}
	if pm, ok := forwardsNot(last.words); ok {
		return fmt.Sprintf("%s %s %q runs %s, which does not forward SIGTERM to the service", argv[0], opt, script, pm), nil, true
	}
	if shell == "bash" && len(cmds) == 1 && last.simple {
		return "", nil, false // bash execs a lone simple command
	}
	// The service: the last command that is not a helper.
	svc := -1
	for i := len(cmds) - 1; i >= 0; i-- {
		if !slices.Contains(helpers, path.Base(cmds[i].words[0])) && cmds[i].simple {
			svc = i
			break
		}
	}
	why = fmt.Sprintf("%s %s %q runs the service as a child of the shell (its last command is not exec'd): the shell gets SIGTERM and does not pass it on", argv[0], opt, script)
	if svc >= 0 {
		c := cmds[svc]
		before := strings.TrimRight(script[:c.start], " \t")
		if before != "" && !strings.HasSuffix(before, "\n") {
			before += " "
		}
		fixed := strings.TrimSpace(before + "exec " + script[c.start:c.end])
		fix = []string{argv[0], opt, fixed}
	}
	return why, fix, true
}

// Wrapper reports whether argv puts something in front of the service
// that will not pass a signal on (see WrapperCheck).
func Wrapper(argv []string) (string, bool) {
	why, _, bad := WrapperCheck(argv)
	return why, bad
}

// wrapperFix is the fix text: the corrected command when one was derived.
// underInit says the service already runs under an init (in the command, or
// Compose's init: true): the fix then does not suggest one.
func wrapperFix(key string, fix []string, underInit bool) string {
	general := "exec the service (the exec form, or \"exec\" before its command in the script) or run it under an init that forwards signals (tini, dumb-init)"
	if underInit {
		general = "exec the service (the exec form, or \"exec\" before its command in the script): an init signals only its direct child, or with tini -g / dumb-init's group mode the shell between them dies of the signal and the init exits with it"
	}
	if fix == nil {
		return "run the service's own command directly (e.g. [\"node\", \"server.js\"], what the start script runs), or " + general
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(fix)
	return fmt.Sprintf("%s: %s — %s", key, strings.TrimSpace(b.String()), general)
}
