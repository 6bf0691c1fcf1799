package watchcmd

import (
	"errors"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/targetsfile"
	"github.com/healthctl/healthctl/internal/watch"
)

// watchTargets builds the targets of the URL arguments and the targets file,
// with every option validated before anything is probed.
func watchTargets(f *cli.Factory, opts *Options) ([]*watch.Endpoint, error) {
	targets, _, err := buildTargets(f, opts)
	return targets, err
}

// buildTargets is watchTargets, also saying how many of the file's
// entries got a template of their own (watch.Builder.Entries). Every error
// is exit 2, naming its source.
func buildTargets(f *cli.Factory, opts *Options) ([]*watch.Endpoint, int, error) {
	b := &watch.Builder{Base: opts.Flags.Input(), Getenv: f.Getenv, File: opts.TargetsFile}
	out, err := b.URLs(opts.URLs)
	if err != nil {
		return nil, 0, cli.UsageError(err)
	}
	if opts.TargetsFile == "" {
		return out, 0, nil
	}
	if opts.OnRedeploy != "" { // the file decides what the hook runs for (issue 43)
		if err := inputfile.TrustInput(opts.TargetsFile, inputfile.Targets); err != nil {
			return nil, 0, cli.UsageErrorf("%s: %v", opts.source("targets"), err)
		}
	}
	fts, err := targetsfile.ReadTargets(opts.TargetsFile)
	if err != nil {
		var te *targetsfile.TargetsError
		if errors.As(err, &te) && te.Unreadable {
			// The path as given, and where: --targets "t.yaml", or
			// HEALTHCTL_WATCH_TARGETS="t.yaml".
			return nil, 0, cli.UsageErrorf("%s: %v", opts.named("targets"), te.Err)
		}
		return nil, 0, cli.UsageError(err)
	}
	out, own, err := b.Entries(out, fts)
	if err != nil {
		return nil, 0, cli.UsageError(err)
	}
	return out, own, nil
}
