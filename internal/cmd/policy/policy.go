// Package policycmd is `healthctl policy`: the decision table built from the
// policy function itself, with the settings in force.
package policycmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
)

// Options is what `healthctl policy` runs with, filled by its RunE.
type Options struct {
	Policy cli.PolicyFlags
}

// Settings are the settings in force, validated.
func (o *Options) Settings() (policy.Settings, error) { return o.Policy.Settings() }

// NewCmd builds the policy command; runF replaces Run in flag parsing tests
// (nil: the real run).
func NewCmd(f *cli.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Print the decision table with the settings in force",
		Long: `Print the reconciler's decision table: what probe and
watch decide for each probe result, in rule order, with the settings in force
(flags, HEALTHCTL_* environment, config file). The table is built by running
the policy itself on one example per row, so it cannot disagree with it.`,
		Example: `  healthctl policy
  healthctl policy --grace 5m --failure-threshold 3
  healthctl policy --escalate-timeouts-after 3 --tls-pending-max 1h -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	opts.Policy.Register(cmd.Flags(), false)
	return cmd
}

// policyJSON is `healthctl policy -o json`: the settings and the rows.
type policyJSON struct {
	SchemaVersion int          `json:"schema_version"`
	Settings      settingsJSON `json:"settings"`
	Rows          []policy.Row `json:"rows"`
}

type settingsJSON struct {
	GraceS                float64 `json:"grace_s"`
	FailureThreshold      int     `json:"failure_threshold"`
	EscalateTimeoutsAfter int     `json:"escalate_timeouts_after"`
	TLSPendingMaxS        float64 `json:"tls_pending_max_s"`
}

// Run prints the table (text or JSON).
func Run(_ context.Context, f *cli.Factory, opts *Options) error {
	s, err := opts.Policy.Settings()
	if err != nil {
		return err
	}
	return f.Render(&tableResult{s: s, rows: policy.DecisionTable(s)})
}

// policyAge prints 30s, 10m, 1h30m (not 10m0s).
func policyAge(d time.Duration) string { return output.Duration(d) }

// settingsLine states the settings in force, as the flags that set them, on
// two lines so they fit 100 columns.
func settingsLine(s policy.Settings) string {
	esc := "0 (never)"
	if s.EscalateTimeoutsAfter > 0 {
		esc = fmt.Sprint(s.EscalateTimeoutsAfter)
	}
	tlsMax := "0 (forever)"
	if s.TLSPendingMax > 0 {
		tlsMax = s.TLSPendingMax.String()
	}
	return fmt.Sprintf("settings: --grace %s --failure-threshold %d\n          --escalate-timeouts-after %s --tls-pending-max %s",
		s.Grace, s.FailureThreshold, esc, tlsMax)
}
