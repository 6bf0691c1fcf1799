package watch

import (
	"strings"

	"github.com/healthctl/healthctl/internal/proxyenv"
	"github.com/healthctl/healthctl/internal/redact"
)

// hookEnviron is the --on-redeploy hook's whole environment: healthctl's own
// minus its credentials, then the decision. The hook inherits the
// rest (PATH, HOME, KUBECONFIG, the cloud's variables: what a redeploy
// command needs), but never:
//   - any HEALTHCTL_* variable (HEALTHCTL_USER, HEALTHCTL_HEADER,
//     HEALTHCTL_WATCH_HEADER… carry healthctl's credentials; the hook gets
//     the five HEALTHCTL_ variables of its decision instead),
//   - the userinfo of a *_PROXY variable (the proxy URL stays, with ***),
//   - any variable whose value holds a secret the target's redactor knows
//     (a -u value, a URL password, a secret header or parameter) or looks
//     like one (userinfo, ?token=…).
func hookEnviron(environ []string, red *redact.Redactor, decision []string) []string {
	out := make([]string, 0, len(environ)+len(decision))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.HasPrefix(strings.ToUpper(k), "HEALTHCTL_") {
			continue
		}
		if strings.HasSuffix(strings.ToUpper(k), "_PROXY") {
			v = stripUserinfo(v)
		}
		if red != nil && red.String(v) != v {
			continue
		}
		out = append(out, k+"="+v)
	}
	return append(out, decision...)
}

// stripUserinfo shows a proxy URL's userinfo as ***.
func stripUserinfo(v string) string {
	u, err := proxyenv.Parse(v)
	if err != nil {
		if strings.Contains(v, "@") {
			return ""
		}
		return v
	}
	if u.User == nil {
		return v
	}
	_, rest, _ := strings.Cut(v, "@")
	if scheme, _, ok := strings.Cut(v, "://"); ok {
		return scheme + "://" + redact.Mask + "@" + rest
	}
	return redact.Mask + "@" + rest
}

// hookRedactor is the redactor of a target's probe options: the hook's
// output goes through it like every other output.
func hookRedactor(t *Endpoint) *redact.Redactor {
	if t.Options != nil {
		return t.Options.Redactor
	}
	if t.Build != nil {
		if o, err := t.Build(); err == nil {
			return o.Redactor
		}
	}
	return redact.NewRedactor(nil, nil)
}
