package cli

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

// TestSuggestFlag: a mistyped long flag is answered with the nearest of
// the command's own and inherited flags (two edits at most, or a prefix);
// nothing far, hidden or not about an unknown flag gets one.
func TestSuggestFlag(t *testing.T) {
	root := &cobra.Command{Use: "healthctl"}
	root.PersistentFlags().String("output", "", "")
	cmd := &cobra.Command{Use: "wait-healthy"}
	root.AddCommand(cmd)
	cmd.Flags().Duration("timeout", 0, "")
	cmd.Flags().Duration("connect-timeout", 0, "")
	cmd.Flags().Bool("fail-open", false, "")
	cmd.Flags().String("secret", "", "")
	cmd.Flags().MarkHidden("secret")
	for _, c := range []struct{ err, want string }{
		{"unknown flag: --timout", "unknown flag: --timout (did you mean --timeout?)"},
		{"unknown flag: --timeuot=5s", "unknown flag: --timeuot=5s (did you mean --timeout?)"},
		{"unknown flag: --conect-timeout", "unknown flag: --conect-timeout (did you mean --connect-timeout?)"},
		{"unknown flag: --fail", "unknown flag: --fail (did you mean --fail-open?)"},
		{"unknown flag: --outptu", "unknown flag: --outptu (did you mean --output?)"},
		{"unknown flag: --secre", "unknown flag: --secre"},
		{"unknown flag: --no-such-flag", "unknown flag: --no-such-flag"},
		{"unknown shorthand flag: 'z' in -z", "unknown shorthand flag: 'z' in -z"},
		{"invalid argument \"x\" for \"--timeout\" flag", "invalid argument \"x\" for \"--timeout\" flag"},
	} {
		err := SuggestFlag(cmd, errors.New(c.err))
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != 2 || err.Error() != c.want {
			t.Errorf("%s: %v, want %q (exit 2)", c.err, err, c.want)
		}
	}
}
