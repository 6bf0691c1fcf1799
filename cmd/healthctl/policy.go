package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
)

func init() {
	registerCommand("policy", func(a *app) *cobra.Command { return a.newPolicyCmd(nil) })
}

// policyOptions is what `healthctl policy` runs with, filled by its RunE.
type policyOptions struct {
	policy policyFlags
}

// newPolicyCmd builds the policy command; runF replaces policyRun in flag
// parsing tests (nil: the real run).
func (a *app) newPolicyCmd(runF func(*policyOptions) error) *cobra.Command {
	opts := &policyOptions{}
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Print the decision table with the settings in force",
		Long: `Print the reconciler's decision table (SPEC §4, seeds/004): what probe and
watch decide for each probe result, in rule order, with the settings in force
(flags, HEALTHCTL_* environment, config file). The table is built by running
the policy itself on one example per row, so it cannot disagree with it.`,
		Example: `  healthctl policy
  healthctl policy --grace 5m --failure-threshold 3
  healthctl policy --escalate-timeouts-after 3 --tls-pending-max 1h -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return a.policyRun(opts)
		},
	}
	opts.policy.register(cmd.Flags(), false)
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

func (a *app) policyRun(opts *policyOptions) error {
	s, err := opts.policy.settings()
	if err != nil {
		return err
	}
	rows := policy.DecisionTable(s)
	if a.json() {
		return output.JSONLine(a.streams.Out, policyJSON{
			SchemaVersion: output.SchemaVersion,
			Settings: settingsJSON{
				GraceS:                s.Grace.Seconds(),
				FailureThreshold:      s.FailureThreshold,
				EscalateTimeoutsAfter: s.EscalateTimeoutsAfter,
				TLSPendingMaxS:        s.TLSPendingMax.Seconds(),
			},
			Rows: rows,
		})
	}
	fmt.Fprintln(a.streams.Out, settingsLine(s))
	return output.PolicyTable(a.streams.Out, rows)
}

// settingsLine states the settings in force, as the flags that set them.
func settingsLine(s policy.Settings) string {
	esc := "0 (never)"
	if s.EscalateTimeoutsAfter > 0 {
		esc = fmt.Sprint(s.EscalateTimeoutsAfter)
	}
	tlsMax := "0 (forever)"
	if s.TLSPendingMax > 0 {
		tlsMax = s.TLSPendingMax.String()
	}
	return fmt.Sprintf("settings: --grace %s --failure-threshold %d --escalate-timeouts-after %s --tls-pending-max %s",
		s.Grace, s.FailureThreshold, esc, tlsMax)
}
