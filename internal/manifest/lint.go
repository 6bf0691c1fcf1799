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
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
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
