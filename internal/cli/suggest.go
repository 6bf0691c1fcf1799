package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// SuggestFlag is the flag error of a command line with a "did you mean" for
// a mistyped long flag (--timout: --timeout), as cobra does for command
// names (its SuggestionsMinimumDistance applies to commands only): the
// command's flags and the ones it inherits within two edits, or one that
// starts with what was typed. Any other flag error is returned as a usage
// error unchanged.
func SuggestFlag(c *cobra.Command, err error) error {
	rest, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok || c == nil {
		return UsageError(err)
	}
	typed, _, _ := strings.Cut(rest, "=")
	if s := closestFlag(c, typed); s != "" {
		return UsageErrorf("%v (did you mean --%s?)", err, s)
	}
	return UsageError(err)
}

// closestFlag is the flag of c nearest to typed, "" when none is near.
func closestFlag(c *cobra.Command, typed string) string {
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		d := editDistance(strings.ToLower(typed), f.Name)
		if d > 2 && len(typed) >= 3 && strings.HasPrefix(f.Name, typed) {
			d = 2
		}
		if d < bestD || d == bestD && best != "" && f.Name < best {
			best, bestD = f.Name, d
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	if bestD > 2 || best == typed {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes: flag names
// are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
