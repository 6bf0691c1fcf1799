// Package versioncmd is `healthctl version`: which build this is.
package versioncmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/version"
)

// Options is what `healthctl version` runs with.
type Options struct {
	// Info is the build to describe (the zero value: this binary's).
	Info *version.Info
}

// NewCmd builds the command; runF replaces Run in flag-parsing tests (nil:
// the real run).
func NewCmd(f *cli.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date, Go version and platform",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
}

// Run prints the build (text or JSON).
func Run(_ context.Context, f *cli.Factory, opts *Options) error {
	in := version.Get()
	if opts.Info != nil {
		in = *opts.Info
	}
	return f.Render(build(in))
}

// build is the build's description as a result.
type build version.Info

func (b build) Docs(render.Writer) render.Docs {
	return render.One(struct {
		SchemaVersion int `json:"schema_version"`
		version.Info
	}{output.SchemaVersion, version.Info(b)})
}

func (b build) Text(w render.Writer) error {
	fmt.Fprint(w.Out, Text(version.Info(b)))
	return nil
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
