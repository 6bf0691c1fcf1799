package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/scheme"
)

// Shell completion of the flags whose values are a closed (or a usual) set:
// -o/--output, --method, --signal, --expect-status. Bash, zsh, fish and
// PowerShell completion scripts all ask the binary itself (cobra's hidden
// __complete command) for the values, so one registration serves every
// shell. Registered only on a completion request: an ordinary run never
// pays for it.

// enumCompletions are the values each flag completes to, with a
// description (built on a completion request only, not at every start).
func enumCompletions() map[string][]cobra.Completion {
	return map[string][]cobra.Completion{
		"method": {
			cobra.CompletionWithDesc("GET", "the default"),
			cobra.CompletionWithDesc("HEAD", "headers only"),
			cobra.CompletionWithDesc("POST", "the default with --data"),
			cobra.CompletionWithDesc("PUT", ""),
			cobra.CompletionWithDesc("PATCH", ""),
			cobra.CompletionWithDesc("DELETE", ""),
			cobra.CompletionWithDesc("OPTIONS", ""),
		},
		"signal": {
			cobra.CompletionWithDesc("TERM", "what Kubernetes and docker stop send (the default)"),
			cobra.CompletionWithDesc("INT", "Ctrl-C"),
			cobra.CompletionWithDesc("QUIT", ""),
			cobra.CompletionWithDesc("HUP", ""),
			cobra.CompletionWithDesc("USR1", ""),
			cobra.CompletionWithDesc("USR2", ""),
			cobra.CompletionWithDesc("WINCH", "Apache httpd's graceful stop"),
		},
		"expect-status": {
			cobra.CompletionWithDesc("2xx", "any 2xx (the default)"),
			cobra.CompletionWithDesc("200", "exactly 200"),
			cobra.CompletionWithDesc("200-399", "2xx and redirects"),
			cobra.CompletionWithDesc("2xx,3xx", "classes, comma-separated"),
		},
	}
}

// RegisterCompletions registers the value completion of every enumerated
// flag in root's command tree. -o lists nagios only for probe, the one
// command that writes it.
func RegisterCompletions(root *cobra.Command) {
	if root.PersistentFlags().Lookup("output") != nil {
		_ = root.RegisterFlagCompletionFunc("output", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			out := []cobra.Completion{
				cobra.CompletionWithDesc("text", "lines for people (a table for watch on a terminal)"),
				cobra.CompletionWithDesc("json", "one JSON object per line"),
			}
			if cmd.Name() == "probe" {
				out = append(out, cobra.CompletionWithDesc("nagios", "monitoring-plugins status line and perfdata"))
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		})
	}
	enums := enumCompletions()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if slices.Contains(urlArgs, c.Name()) && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return completeURL(toComplete)
			}
		}
		for _, name := range urlFlags {
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
					return completeURL(toComplete)
				})
			}
		}
		for name, values := range enums {
			if c.LocalNonPersistentFlags().Lookup(name) == nil {
				continue
			}
			_ = c.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return values, cobra.ShellCompDirectiveNoFileComp
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// urlArgs are the commands whose arguments are URLs; urlFlags the flags
// whose values are. Slices, which the linker lays out: a package-level map
// literal is built at every start, probe included.
var (
	urlArgs  = []string{"probe", "wait-healthy", "watch"}
	urlFlags = []string{"ready", "live", "inflight", "traffic"}
)

// completeURL completes a URL's scheme from the scheme table (each with
// what a pass is) until one is typed; after it, nothing (no file names).
func completeURL(typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if strings.Contains(typed, "://") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, s := range scheme.Schemes() {
		if strings.HasPrefix(s.Name+"://", typed) {
			out = append(out, cobra.CompletionWithDesc(s.Name+"://", s.Words.Pass))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
