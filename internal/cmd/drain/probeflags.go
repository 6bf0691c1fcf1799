package draincmd

import (
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/cli"
)

// notHonoured are the probe flags drain-test does not take, with why: its
// polls judge the status themselves (200-399 before the signal, >= 400
// after), never follow a redirect (a 3xx is an answer, as the kubelet takes
// it), are bounded by the poll's own window, read no body, and talk to the
// one address the name dials. They are not registered, so giving one is a
// usage error naming it (exit 2), never a value silently ignored. Built on
// first use: a package-level map literal is built at every start.
var notHonoured = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"follow":            "a 3xx is an answer",
		"max-time":          "each poll has its own window",
		"max-body":          "no body is judged",
		"all-addresses":     "the service is one process",
		"expect-status":     "the status is judged by the invariants",
		"expect-body":       "no body is judged",
		"expect-body-regex": "no body is judged",
		"expect-json":       "no body is judged",
		"expect-header":     "no header is judged",
	}
})

// registerProbeFlags registers the probe flags drain-test honours (-H, -u,
// --resolve, --cacert, --insecure, -4/-6, the timeouts …) into fl, read
// through p as the other commands read theirs.
func registerProbeFlags(cmd *cobra.Command, p *cli.ProbeFlags) {
	all := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	p.Register(all)
	all.VisitAll(func(f *pflag.Flag) {
		if _, skip := notHonoured()[f.Name]; !skip {
			cmd.Flags().AddFlag(f)
		}
	})
	// A probe flag drain-test does not take says so, with why, instead of
	// pflag's bare "unknown flag".
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if name := unknownProbeFlag(all, err.Error()); name != "" {
			return cli.UsageErrorf("--%s: drain-test does not take this probe flag (%s)", name, notHonoured()[name])
		}
		return cli.SuggestFlag(c, err)
	})
}

// unknownProbeFlag is the not-honoured probe flag pflag's error is about,
// "" when it is about another.
func unknownProbeFlag(all *pflag.FlagSet, msg string) string {
	var name string
	if rest, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		name, _, _ = strings.Cut(rest, "=")
	} else if rest, ok := strings.CutPrefix(msg, "unknown shorthand flag: '"); ok && len(rest) > 1 {
		if f := all.ShorthandLookup(rest[:1]); f != nil {
			name = f.Name
		}
	}
	if _, ok := notHonoured()[name]; ok {
		return name
	}
	return ""
}
