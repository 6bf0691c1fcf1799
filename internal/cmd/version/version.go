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
		Short: "Print the version, commit, build date, Go version and platform",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			in := version.Get()
			if f.JSON() {
				return output.JSONLine(f.Streams.Out, struct {
					SchemaVersion int `json:"schema_version"`
					version.Info
				}{output.SchemaVersion, in})
			}
			fmt.Fprint(f.Streams.Out, Text(in))
			return nil
		},
	}
}

// Text is what `healthctl version` and `healthctl --version` print.
func Text(in version.Info) string {
	s := fmt.Sprintf("healthctl %s\n", in.Version)
	if in.Commit != "" {
		s += fmt.Sprintf("  commit   %s\n", in.Commit)
	}
	if in.Date != "" {
		s += fmt.Sprintf("  built    %s\n", in.Date)
	}
	return s + fmt.Sprintf("  go       %s\n  platform %s\n", in.GoVersion, in.Platform)
}
