// Package versioncmd is `healthctl version`: which build this is.
package versioncmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/version"
)

// NewCmd builds the command.
func NewCmd(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if f.JSON() {
				return output.JSONLine(f.Streams.Out, map[string]any{"schema_version": output.SchemaVersion, "version": version.String()})
			}
			fmt.Fprintf(f.Streams.Out, "healthctl %s\n", version.String())
			return nil
		},
	}
}
