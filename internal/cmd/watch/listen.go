package watchcmd

import (
	"errors"
	"net/url"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/listen"
	"github.com/healthctl/healthctl/internal/watch"
)

// newService builds --listen's service: the /probe modules (--probe-modules,
// else http_2xx), the allow list (--probe-allow, else the targets' hosts
// and ports), the rate and /probe's probes at once (concurrency, the
// sweep's: a budget of their own beside it); every error is exit 2, before
// anything is probed.
func newService(f *cli.Factory, opts *Options, targets []*watch.Endpoint, concurrency int) (*listen.Service, error) {
	base := opts.Flags.Input()
	var mods map[string]*blackbox.Module
	var err error
	if opts.ProbeModules != "" {
		mods, err = blackbox.ReadModules(opts.ProbeModules, base, f.Getenv)
		var me *blackbox.ModulesError
		if errors.As(err, &me) {
			return nil, cli.UsageErrorf("%s: %v", opts.source("probe-modules"), err)
		}
	} else {
		mods, err = blackbox.DefaultModules(base, f.Getenv)
	}
	if err != nil {
		return nil, cli.UsageError(err)
	}
	var allow *listen.Allow
	if len(opts.ProbeAllow) > 0 {
		if allow, err = listen.ParseAllow(opts.ProbeAllow); err != nil {
			return nil, cli.UsageErrorf("%s: %v", opts.source("probe-allow"), err)
		}
	} else {
		urls := make([]*url.URL, 0, len(targets))
		for _, t := range targets {
			if u, err := url.Parse(t.URL); err == nil {
				urls = append(urls, u)
			}
		}
		allow = listen.AllowURLs(urls)
	}
	// A module's redirects are followed only to hops the list allows.
	blackbox.BindAllow(mods, allow.Permits)
	var load func() (map[string]*blackbox.Module, error)
	if opts.ProbeModules != "" {
		load = func() (map[string]*blackbox.Module, error) {
			m, err := blackbox.ReadModules(opts.ProbeModules, base, f.Getenv)
			if err == nil {
				blackbox.BindAllow(m, allow.Permits)
			}
			return m, err
		}
	}
	set := listen.NewModuleSet(mods, opts.ProbeModules, load)
	if opts.ProbeRate <= 0 {
		return nil, cli.UsageErrorf("%s: must be positive", opts.named("probe-rate"))
	}
	in := base
	maxSweep := in.MaxTime
	if maxSweep == 0 {
		maxSweep = in.ConnectTimeout + in.ReadTimeout
	}
	if opts.OnRedeploy != "" {
		maxSweep += opts.HookTimeout
	}
	return listen.New(listen.Config{Interval: opts.Interval, MaxSweep: maxSweep, Now: f.Clock, Probe: f.Probe,
		ModuleSet: set, Allow: allow, Rate: opts.ProbeRate, ProbeConcurrency: concurrency, Fold: f.ExitCode, Hook: opts.OnRedeploy != ""}), nil
}

// checkListenFlags refuses the /probe flags without --listen.
func checkListenFlags(opts *Options) error {
	if opts.Listen != "" {
		return nil
	}
	for _, name := range []string{"probe-modules", "probe-allow", "probe-rate"} {
		if opts.flagSet != nil {
			if fl := opts.flagSet.Lookup(name); fl != nil && fl.Changed {
				return cli.UsageErrorf("%s is for --listen's /probe: add --listen ADDR", opts.source(name))
			}
		}
	}
	return nil
}
